// The `mode` / `ssh` arguments shared by probe_env and run_training. They follow
// PrecisionComparer's config ({"mode": "local"|"remote", "ssh": {"host", "username",
// "port"}}) with parity's additions (identity_file, password_env, known_hosts). A
// "password" value is refused: it would sit in a config file or a transcript; the password
// may only come from an environment variable named in ssh.password_env.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "support/json_reader.h"

namespace parity::tools {

// Reads "mode" and "ssh" from `reader`; returns the SSH target when the mode is remote.
Result<std::optional<run::SshTarget>> DecodeRemote(const nlohmann::json& arguments, JsonReader& reader);

// The JSON Schema properties "mode" and "ssh", merged into both tools' input schemas.
nlohmann::json RemoteSchemaProperties();

}  // namespace parity::tools
