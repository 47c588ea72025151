// What records keep of secrets: URLs without their credentials (every form git accepts),
// environment values only for recordable names.
#include "support/redact.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(Redact, UrlCredentialsAreRemoved) {
  EXPECT_EQ(RedactUrlCredentials("https://alice:ghp_SECRET@github.com/org/repo.git"), "https://alice@github.com/org/repo.git");
  EXPECT_EQ(RedactUrlCredentials("https://ghp_SECRET@github.com/org/repo.git"), "https://github.com/org/repo.git");
  EXPECT_EQ(RedactUrlCredentials("https://oauth2:glpat-SECRET@gitlab.example.com:8443/g/r"),
            "https://oauth2@gitlab.example.com:8443/g/r");
  EXPECT_EQ(RedactUrlCredentials("ssh://git:pw@host:2222/r.git"), "ssh://git@host:2222/r.git");
  // Nothing secret: unchanged.
  for (const char* same : {"ssh://git@host/r.git", "git@github.com:org/repo.git", "https://github.com/org/repo",
                           "/srv/git/repo.git", "file:///srv/git/repo.git", ""}) {
    EXPECT_EQ(RedactUrlCredentials(same), same);
  }
}

TEST(Redact, UrlsInsideTextAreRedacted) {
  std::string text = "fatal: unable to access 'https://bob:hunter2@example.com/r.git/': 403; also http://tok@h/x";
  std::string out = RedactCredentialsInText(text);
  EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
  EXPECT_EQ(out.find("tok@"), std::string::npos) << out;
  EXPECT_NE(out.find("https://bob@example.com/r.git/"), std::string::npos) << out;
  EXPECT_EQ(RedactCredentialsInText("a :// b"), "a :// b");
}

TEST(Redact, EnvironmentValuesAreKeptOnlyForRecordableNames) {
  RecordedEnv r = RecordEnv({{"PYTHONHASHSEED", "0"},
                             {"HCCL_DETERMINISTIC", "true"},
                             {"HF_TOKEN", "hf_SECRET"},
                             {"MY_SETTING", "x"},
                             {"CUDA_API_KEY", "looks-secret"}});
  EXPECT_EQ(r.values, (std::map<std::string, std::string>{{"HCCL_DETERMINISTIC", "true"}, {"PYTHONHASHSEED", "0"}}));
  EXPECT_EQ(r.unrecorded, (std::set<std::string>{"CUDA_API_KEY", "HF_TOKEN", "MY_SETTING"}));
  SetRecordableEnvNames({"MY_SETTING"});
  EXPECT_TRUE(IsRecordableEnvName("MY_SETTING"));
  EXPECT_FALSE(IsRecordableEnvName("HF_TOKEN"));
  SetRecordableEnvNames({});
  EXPECT_FALSE(IsRecordableEnvName("MY_SETTING"));
}

}  // namespace
}  // namespace parity
