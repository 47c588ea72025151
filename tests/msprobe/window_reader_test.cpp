// The windowed reader (dump.json split at its entries, each window parsed alone) must give
// exactly what parsing the whole text gives: on the real fixture dumps, with windows so
// small that almost every entry ends one, and against the same text minified (no line
// breaks, so it is parsed whole).
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "domain/msprobe/dump.h"
#include "tests/msprobe/fixtures.h"

namespace parity::msprobe {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Minify(const std::string& json) {
  std::string out(json.size(), '\0');
  size_t length = 0;
  EXPECT_EQ(simdjson::minify(json.data(), json.size(), out.data(), length), simdjson::SUCCESS);
  out.resize(length);
  return out;
}

// Every row field, as text, so a difference reads plainly in the failure.
std::vector<std::string> Describe(const Dump& d) {
  std::vector<std::string> out;
  out.push_back(d.task + "|" + d.level + "|" + d.framework + "|" + DumpModeName(d.mode));
  for (const Entry& e : d.entries) {
    out.push_back("entry " + std::string(e.name) + " " + std::to_string(e.first_row) + "+" + std::to_string(e.row_count));
  }
  for (const Row& r : d.rows) {
    std::string line = d.RowName(r) + " " + RowStateName(r.state) + " " + d.Text(r.dtype) + " " + d.Text(r.shape) +
                       " " + d.RequiresGradString(r) + " " + d.Md5String(r) + " " + d.Text(r.data_name) +
                       (r.tensor ? " tensor" : " scalar");
    for (int s = 0; s < 4; ++s) line += " " + d.StatString(r.stat(s)) + (r.stat(s).integral ? "i" : "");
    out.push_back(line);
  }
  return out;
}

TEST(WindowReader, SmallWindowsAndWholeTextReadTheSameRows) {
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const char* config : {"statistics_L1", "statistics_mix", "md5_L1", "md5_mix", "tensor_L1"}) {
    SCOPED_TRACE(config);
    fs::path file = fixtures / "dumps/candidate" / config / "step0/rank0/dump.json";
    std::string text = Slurp(file);
    ASSERT_FALSE(text.empty());

    auto whole = ParseDumpJson(Minify(text), file);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_EQ(whole->windows, 1u);  // no line breaks: parsed whole

    ReadOptions tiny;
    tiny.window_bytes = 256;  // smaller than most entries: the window grows, and most entries end one
    auto windowed = ParseDumpJson(text, file, tiny);
    ASSERT_TRUE(windowed.ok()) << windowed.status().ToString();
    EXPECT_GT(windowed->windows, whole->entries.size() / 2);
    EXPECT_GT(windowed->dom_windows, windowed->windows / 2);  // the fast path, checked against On Demand's whole read

    auto from_file = ReadDumpJson(file);
    ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
    EXPECT_EQ(from_file->bytes, text.size());

    std::vector<std::string> expected = Describe(*whole);
    EXPECT_GT(expected.size(), 10u);
    EXPECT_EQ(Describe(*windowed), expected);
    EXPECT_EQ(Describe(*from_file), expected);
  }
}

// Files are mapped and parsed in place: small windows over the mapping, with the file's end
// inside its last page (simdjson's padding read past the end) and on a page boundary (the
// last window copied out), must read what the whole text gives.
TEST(WindowReader, MappedFilesInSmallWindowsWhateverTheirSize) {
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  testing::TempDir dir;
  std::string text = Slurp(fixtures / "dumps/candidate/statistics_L1/step0/rank0/dump.json");
  auto whole = ParseDumpJson(Minify(text), "whole");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t tail : {size_t{0}, size_t{1}, page - 1}) {  // bytes into the last page (0: ends on a boundary)
    std::string sized = text;
    while (sized.size() % page != tail) sized += ' ';  // trailing spaces: still valid JSON
    fs::path file = dir.path() / ("dump" + std::to_string(tail) + ".json");
    std::ofstream(file, std::ios::binary) << sized;
    ReadOptions tiny;
    tiny.window_bytes = 256;
    auto mapped = ReadDumpJson(file, tiny);
    ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
    EXPECT_GT(mapped->dom_windows, 10u) << tail;
    EXPECT_EQ(mapped->bytes, sized.size());
    EXPECT_EQ(Describe(*mapped), Describe(*whole)) << tail;
  }
}

// A dump.json that is not a regular file (a pipe: `<(zcat dump.json.gz)`) is read through.
TEST(WindowReader, APipeIsReadToo) {
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  fs::path file = fixtures / "dumps/candidate/md5_L1/step0/rank0/dump.json";
  std::string text = Slurp(file);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  auto piped = ReadDumpJson("/proc/self/fd/" + std::to_string(fds[0]));
  writer.join();
  close(fds[0]);
  ASSERT_TRUE(piped.ok()) << piped.status().ToString();
  auto whole = ParseDumpJson(Minify(text), file);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(Describe(*piped), Describe(*whole));
}

TEST(WindowReader, DataNotLastAndEntriesLargerThanTheWindow) {
  // "data" before the other members, a line-per-key layout with a 4-space indent.
  const std::string text = R"({
    "data": {
        "Torch.add.0.forward": {
            "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0, "Mean": 0.5, "Norm": 1.25, "requires_grad": false}],
            "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": NaN, "Min": -Infinity, "Mean": 0.5, "Norm": 1.25, "requires_grad": true}]
        },
        "Torch.add.1.forward": {
            "input_args": [{"type": "int", "value": 3}]
        }
    },
    "task": "statistics",
    "level": "L1"
})";
  ReadOptions small;
  small.window_bytes = 64;
  auto windowed = ParseDumpJson(text, "inline.json", small);
  ASSERT_TRUE(windowed.ok()) << windowed.status().ToString();
  EXPECT_EQ(windowed->task, "statistics");
  EXPECT_EQ(windowed->level, "L1");
  ASSERT_EQ(windowed->rows.size(), 3u);
  EXPECT_EQ(windowed->StatString(windowed->rows[1].stat(1)), "-inf");
  EXPECT_EQ(windowed->StatString(windowed->rows[2].stat(0)), "3");
  EXPECT_LT(windowed->dom_windows, windowed->windows);  // NaN / -Infinity: read by On Demand
  auto whole = ParseDumpJson(Minify(text), "inline.json");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(Describe(*windowed), Describe(*whole));
}

// Values the real fixtures hold few of, read by the DOM walk (small windows) and by the On
// Demand walk (the minified text, parsed whole): the rows must be the same.
TEST(WindowReader, DomAndOnDemandAgreeOnEveryKindOfValue) {
  const std::string text = R"({
  "task": "statistics",
  "level": "L1",
  "data": {
  "Torch.view.0.forward": {
   "input_args": [{"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [4, 0, 18446744073709551615], "Max": 1, "Min": -2, "Mean": 1e-30, "Norm": 18446744073709551615, "requires_grad": true, "md5": "0badf00d", "data_name": "x.pt"},
    {"type": "torch.Size", "value": [2, 3]}, {"type": "slice", "value": [1, null, 2]}, {"type": "ellipsis", "value": "..."}, null],
   "input_kwargs": {"approximate": {"type": "str", "value": "t\u00e4nh \"q\""}, "flag": {"type": "bool", "value": false},
    "cfg": {"type": "dict", "value": {"a": [1, 2.5, "s"], "b": null}}, "dst": {"type": "int", "value": 3},
    "group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1]}, "odd": {"type": "weird", "dtype": 7, "shape": "n/a"},
    "nested": {"inner": [{"type": "float", "value": 0.1}]}},
   "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [], "Max": "inf", "Min": true, "Mean": null, "Norm": 2.5}]
  },
  "Module.layer.Linear.parameters_grad": {
   "weight": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 2], "Max": 0.5, "Min": 0.25, "Mean": 0.375, "Norm": 1.0},
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1, 2, 3, 4, 5], "Max": 0.5, "Min": 0.25, "Mean": 0.375, "Norm": 1.0},
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 2], "Max": 0.5, "Min": 0.25, "Mean": 0.375, "Norm": 1.0},
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, -1, 151936, 4096], "Max": 0.5, "Min": 0.25, "Mean": 0.375, "Norm": 1.0},
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 2.5], "Max": 0.5, "Min": 0.25, "Mean": 0.375, "Norm": 1.0},
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1, 2, 3, 4, 5], "Max": 0.5, "Min": 0.25, "Mean": 0.375, "Norm": 1.0}]
  },
  "Torch.add.1.forward": {
   "input_args": [{"type": "int", "value": 3}]
  }
 }
})";
  ReadOptions small;
  small.window_bytes = 64;
  auto windowed = ParseDumpJson(text, "inline.json", small);
  ASSERT_TRUE(windowed.ok()) << windowed.status().ToString();
  EXPECT_EQ(windowed->dom_windows, windowed->windows - 1);  // every window but the last (On Demand, with the end)
  auto whole = ParseDumpJson(Minify(text), "inline.json");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->dom_windows, 0u);
  EXPECT_EQ(Describe(*windowed), Describe(*whole));
  EXPECT_GT(windowed->rows.size(), 17u);
  std::string shapes;  // DOM's shape table (up to four dimensions) and its fallback print the same as Python's str()
  for (const Row& row : windowed->rows) shapes += windowed->Text(row.shape) + ";";
  EXPECT_NE(shapes.find("[2, 2];[1, 2, 3, 4, 5];[2, 2];[2, -1, 151936, 4096];[2, 2.5];[1, 2, 3, 4, 5];"), std::string::npos) << shapes;
}

// A body's row sources in msprobe's order (input_args, input_kwargs, input, parameters,
// output) whatever their order in the file; rows of one source keep theirs. Both walks.
TEST(WindowReader, RowSourcesComeInMsprobesOrderWhateverTheKeyOrder) {
  const std::string leaf = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0})";
  const std::string text = "{\n \"task\": \"statistics\",\n \"level\": \"L0\",\n \"data\": {\n"
                           "  \"Module.a.Linear.forward.0\": {\"output\": [" + leaf + ", " + leaf + "], \"parameters\": {\"weight\": " + leaf +
                           ", \"bias\": " + leaf + "}, \"input_kwargs\": {\"x\": " + leaf + "}, \"input_args\": [" + leaf + "]\n  },\n"
                           "  \"Module.b.Linear.forward.0\": {\"input_args\": [" + leaf + "], \"output\": [" + leaf + "]\n  },\n"
                           "  \"Module.c.Linear.forward.0\": {\"input\": [" + leaf + "], \"output\": [" + leaf + "]\n  }\n }\n}";
  const std::vector<std::string> want = {
      "Module.a.Linear.forward.0.input.0", "Module.a.Linear.forward.0.input.x", "Module.a.Linear.forward.0.parameters.weight",
      "Module.a.Linear.forward.0.parameters.bias", "Module.a.Linear.forward.0.output.0", "Module.a.Linear.forward.0.output.1",
      "Module.b.Linear.forward.0.input.0", "Module.b.Linear.forward.0.output.0", "Module.c.Linear.forward.0.input.0",
      "Module.c.Linear.forward.0.output.0"};
  ReadOptions small;
  small.window_bytes = 64;
  for (const std::string& input : {text, Minify(text)}) {
    auto dump = ParseDumpJson(input, "order.json", small);
    ASSERT_TRUE(dump.ok()) << dump.status().ToString();
    std::vector<std::string> names;
    for (const Row& row : dump->rows) names.push_back(dump->RowName(row));
    EXPECT_EQ(names, want);
    EXPECT_EQ(dump->entries[0].row_count, 6u);
  }
  auto windowed = ParseDumpJson(text, "order.json", small);
  ASSERT_TRUE(windowed.ok());
  EXPECT_GE(windowed->dom_windows, 2u);  // the first two entries went through DOM
}

TEST(WindowReader, ABrokenEntryIsReportedWithTheFileName) {
  const std::string text = "{\n \"task\": \"statistics\",\n \"data\": {\n  \"A.b.0.forward\": {\"input_args\": [ }\n  },\n"
                           "  \"A.b.1.forward\": {}\n }\n}";
  auto dump = ParseDumpJson(text, "/x/broken.json");
  ASSERT_FALSE(dump.ok());
  EXPECT_NE(dump.status().message().find("/x/broken.json"), std::string::npos) << dump.status().message();
}

TEST(WindowReader, MovingToAnotherPoolKeepsEveryText) {
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  auto base = ReadDumpJson(fixtures / "dumps/baseline/statistics_mix/step0/rank0/dump.json");
  auto cand = ReadDumpJson(fixtures / "dumps/candidate/statistics_mix/step0/rank0/dump.json");
  ASSERT_TRUE(base.ok() && cand.ok());
  ASSERT_NE(base->pool, cand->pool);
  std::vector<std::string> before = Describe(*cand);
  // Interned in a different order in the other pool, so ids really change.
  base->pool->Intern("a text only the baseline's pool holds");
  MoveToPool(*cand, base->pool);
  EXPECT_EQ(cand->pool, base->pool);
  EXPECT_EQ(Describe(*cand), before);
}

}  // namespace
}  // namespace parity::msprobe
