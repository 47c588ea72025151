// The conformance suite's fixture tools, prompts and resources (test_simple_text, ...,
// test_input_required_result_*, the tasks extension's greet, slow_compute, ...), built on the same tool contract parity's tools use.
#pragma once

#include <memory>

#include "mcp-server/registry.h"

namespace parity::conformance {

std::shared_ptr<mcp::Catalog> MakeFixtureCatalog();
// The tasks extension's fixtures (task_fixtures.cpp), part of MakeFixtureCatalog.
void AddTaskTools(mcp::Catalog& catalog);

}  // namespace parity::conformance
