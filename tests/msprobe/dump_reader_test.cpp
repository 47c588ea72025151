// Dumps written in the exact layouts of formats.md §1.b (the msprobe docs' own examples),
// plus the corner cases msprobe's flattening rule and compare rules define.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "domain/msprobe/compare.h"
#include "domain/msprobe/dump.h"
#include "domain/msprobe/dump_builder.h"
#include "domain/msprobe/first_diff.h"
#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe {
namespace {

std::vector<std::string> Names(const Dump& d) {
  std::vector<std::string> out;
  for (const Row& r : d.rows) out.push_back(d.RowName(r));
  return out;
}

constexpr const char* kL1 = R"({
  "task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": "/dump/path",
  "data": {
    "Functional.relu.0.forward": {
      "input_args": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [32, 16, 28, 28], "Max": 1.3864083290100098, "Min": -1.3364859819412231, "Mean": 0.03711778670549393, "Norm": 236.20692443847656, "requires_grad": true, "data_name": "Functional.relu.0.forward.input.0.pt"}
      ],
      "input_kwargs": {},
      "output": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [32, 16, 28, 28], "Max": 1.3864083290100098, "Min": 0.0, "Mean": 0.16849493980407715, "Norm": 175.23345947265625, "requires_grad": true, "data_name": "Functional.relu.0.forward.output.0.pt"}
      ]
    },
    "Functional.relu.0.backward": {
      "input": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [32, 16, 28, 28], "Max": 0.0001815402356442064, "Min": -0.00013352684618439525, "Mean": 0.00011915402356442064, "Norm": 0.007598237134516239, "requires_grad": false, "data_name": "Functional.relu.0.backward.input.0.pt"}
      ],
      "output": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [32, 16, 28, 28], "Max": 0.0001815402356442064, "Min": -0.00012117840378778055, "Mean": 2.0098118724831693e-08, "Norm": 0.006532244384288788, "requires_grad": false, "data_name": "Functional.relu.0.backward.output.0.pt"}
      ]
    }
  }
})";

TEST(DumpReader, FlattensTheL1Example) {
  auto dump = ParseDumpJson(kL1, "l1.json");
  ASSERT_TRUE(dump.ok()) << dump.status().ToString();
  EXPECT_EQ(dump->mode, DumpMode::kAll);
  EXPECT_EQ(dump->entries.size(), 2u);
  EXPECT_EQ(Names(*dump), (std::vector<std::string>{
                              "Functional.relu.0.forward.input.0", "Functional.relu.0.forward.output.0",
                              "Functional.relu.0.backward.input.0", "Functional.relu.0.backward.output.0"}));
  const Row& in = dump->rows[0];
  EXPECT_EQ(dump->Text(in.shape), "[32, 16, 28, 28]");
  EXPECT_EQ(dump->StatString(in.stat(0)), "1.3864083290100098");
  EXPECT_EQ(dump->StatString(dump->rows[1].stat(1)), "0.0");
  EXPECT_EQ(dump->Text(in.data_name), "Functional.relu.0.forward.input.0.pt");
  EXPECT_EQ(dump->RequiresGradString(in), "True");
  EXPECT_EQ(dump->rows[1].state, RowState::kOutput);
}

constexpr const char* kL0 = R"({
  "task": "statistics", "level": "L0", "framework": "pytorch", "dump_data_dir": null,
  "data": {
    "Module.conv2.Conv2d.forward.0": {
      "input_args": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [8, 16, 14, 14], "Max": 1.638758659362793, "Min": 0.0, "Mean": 0.2544615864753723, "Norm": 70.50277709960938, "requires_grad": true}
      ],
      "input_kwargs": {},
      "output": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [8, 32, 10, 10], "Max": 1.6815717220306396, "Min": -1.5120246410369873, "Mean": -0.025344856083393097, "Norm": 149.65576171875, "requires_grad": true}
      ],
      "parameters": {
        "weight": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [32, 16, 5, 5], "Max": 0.05992485210299492, "Min": -0.05999220535159111, "Mean": -0.0006165213999338448, "Norm": 3.421217441558838, "requires_grad": true}
      }
    },
    "Module.conv2.Conv2d.parameters_grad.0": {
      "weight": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [32, 16, 5, 5], "Max": 0.018550323322415352, "Min": -0.008627401664853096, "Mean": 0.0006675920449197292, "Norm": 0.26084786653518677, "requires_grad": false}
      ]
    },
    "Module.conv2.Conv2d.backward.0": {
      "input": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [8, 32, 10, 10], "Max": 0.0015069986693561077, "Min": -0.001139344065450132, "Mean": 3.3215508210560074e-06, "Norm": 0.020567523315548897, "requires_grad": false}
      ],
      "output": [
        {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [8, 16, 14, 14], "Max": 0.0007466732058674097, "Min": -0.00044813455315306783, "Mean": 6.814070275140693e-06, "Norm": 0.01474067009985447, "requires_grad": false}
      ]
    }
  }
})";

TEST(DumpReader, PutsParametersBeforeOutputsAndDoesNotIndexParameterGrads) {
  auto dump = ParseDumpJson(kL0, "l0.json");
  ASSERT_TRUE(dump.ok()) << dump.status().ToString();
  EXPECT_EQ(dump->mode, DumpMode::kSummary);
  EXPECT_EQ(Names(*dump), (std::vector<std::string>{
                              "Module.conv2.Conv2d.forward.0.input.0", "Module.conv2.Conv2d.forward.0.parameters.weight",
                              "Module.conv2.Conv2d.forward.0.output.0", "Module.conv2.Conv2d.parameters_grad.0.weight",
                              "Module.conv2.Conv2d.backward.0.input.0", "Module.conv2.Conv2d.backward.0.output.0"}));
  EXPECT_EQ(dump->rows[1].state, RowState::kParameters);
  EXPECT_EQ(dump->rows[3].state, RowState::kParametersGrad);
}

// Scalars, nested lists, null arguments, md5 fields, and the NaN / Infinity that Python's
// json module writes for overflowed statistics.
constexpr const char* kMd5WithScalars = R"({
  "task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null,
  "data": {
    "Functional.layer_norm.0.forward": {
      "input_args": [
        {"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [2, 16], "Max": NaN, "Min": -Infinity, "Mean": 0.5, "Norm": Infinity, "requires_grad": true, "md5": "0a1b2c3d"},
        [{"type": "int", "value": 16}],
        null,
        {"type": "float", "value": 1e-05}
      ],
      "input_kwargs": {"approximate": {"type": "str", "value": "tanh"}, "flag": {"type": "bool", "value": true}},
      "output": [
        {"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [], "Max": 2, "Min": 2, "Mean": 2, "Norm": 2, "requires_grad": false, "md5": "ffffffff"}
      ]
    }
  }
})";

TEST(DumpReader, ReadsScalarsNullsMd5AndNonFiniteTokens) {
  auto dump = ParseDumpJson(kMd5WithScalars, "md5.json");
  ASSERT_TRUE(dump.ok()) << dump.status().ToString();
  EXPECT_EQ(dump->mode, DumpMode::kMd5);
  EXPECT_EQ(Names(*dump), (std::vector<std::string>{
                              "Functional.layer_norm.0.forward.input.0", "Functional.layer_norm.0.forward.input.1.0",
                              "Functional.layer_norm.0.forward.input.2", "Functional.layer_norm.0.forward.input.3",
                              "Functional.layer_norm.0.forward.input.approximate",
                              "Functional.layer_norm.0.forward.input.flag", "Functional.layer_norm.0.forward.output.0"}));
  const auto& r = dump->rows;
  EXPECT_EQ(dump->StatString(r[0].stat(0)), "nan");
  EXPECT_EQ(dump->StatString(r[0].stat(1)), "-inf");
  EXPECT_EQ(dump->Md5String(r[0]), "0a1b2c3d");
  // Scalars: dtype is Python's type, shape [], the value as every statistic, and msprobe's
  // synthesised CRC of str(value) (483e80d4 for 16, as the real compare CSV shows).
  EXPECT_EQ(dump->Text(r[1].dtype), "<class 'int'>");
  EXPECT_EQ(dump->Text(r[1].shape), "[]");
  EXPECT_EQ(dump->StatString(r[1].stat(0)), "16");
  EXPECT_EQ(dump->Md5String(r[1]), "483e80d4");
  EXPECT_EQ(dump->RequiresGradString(r[1]), "N/A");
  EXPECT_EQ(dump->Text(r[2].dtype), "None");
  EXPECT_EQ(dump->StatString(r[2].stat(0)), "None");
  EXPECT_EQ(dump->StatString(r[3].stat(0)), "1e-05");
  EXPECT_EQ(dump->Text(r[4].dtype), "<class 'str'>");
  EXPECT_EQ(dump->StatString(r[4].stat(0)), "tanh");
  EXPECT_EQ(dump->StatString(r[5].stat(0)), "True");
  EXPECT_EQ(dump->Text(r[5].dtype), "<class 'bool'>");
  EXPECT_EQ(dump->Text(r[6].shape), "[]");
  EXPECT_EQ(dump->StatString(r[6].stat(0)), "2");
}

TEST(DumpReader, ErrorsNameTheFile) {
  auto broken = ParseDumpJson(R"({"task": "statistics", "data": {"A.b.0.forward": {"input_args": [ }})", "/x/dump.json");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("/x/dump.json"), std::string::npos) << broken.status().message();
  auto structure = ParseDumpJson(R"({"task": "structure", "data": {}})", "/y/dump.json");
  ASSERT_FALSE(structure.ok());
  EXPECT_NE(structure.status().message().find("structure"), std::string::npos);
  auto missing = ReadDumpJson("/nonexistent/dump.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().kind(), ErrorKind::kNotFound);
}

std::string StatDump(const std::string& max, const std::string& dtype, const std::string& norm) {
  return R"({"task": "statistics", "level": "L1", "data": {
    "Torch.mul.0.forward": {
      "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}],
      "input_kwargs": {},
      "output": [{"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": [4], "Max": )" + max +
         R"(, "Min": 0.0, "Mean": 0.5, "Norm": )" + norm + R"(, "requires_grad": false}]
    }}})";
}

TEST(Compare, ComputesMsprobeDiffsAndClasses) {
  auto bench = ParseDumpJson(StatDump("0.0", "torch.float32", "2.0"), "bench.json");
  auto npu = ParseDumpJson(StatDump("1.5", "torch.float32", "4.0"), "npu.json");
  ASSERT_TRUE(bench.ok() && npu.ok());
  auto table = Compare(*npu, *bench, {});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->rows.size(), 2u);
  const CompareRow& out = table->rows[1];
  EXPECT_EQ(table->DiffText(out, 0, false), "1.5");
  EXPECT_EQ(table->DiffText(out, 0, true), "inf");  // bench 0
  EXPECT_EQ(table->DiffText(out, 1, false), "0");   // equal
  EXPECT_EQ(table->DiffText(out, 3, true), "100.0%");
  // Input unchanged, output NormRelativeErr 100% > 50%: msprobe's RelativeErrChecker error.
  EXPECT_EQ(out.level, Level::kError);
  EXPECT_EQ(table->Messages(out).front(), "error: The NormRelativeErr of output is greater than 0.5.");
  EXPECT_EQ(table->rows[0].level, Level::kPass);
  EXPECT_TRUE(table->Identical(table->rows[0]));
}

// The checkers decide on bounds of NormRelativeErr and compute it exactly (cells printed and
// parsed as pandas does) only when the bounds straddle a threshold. Norms placed on and
// around every threshold (0.1, 0.5, the ratio 10, zero), one-ulp differences, and cells
// whose leading zeros cost pandas digits: the classes must be those of the exact rule.
TEST(Compare, RelativeCheckersDecideAsTheExactValuesDo) {
  std::mt19937_64 random(11);
  auto leaf = [](double norm) {
    return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": )" +
           PyFloatRepr(norm) + R"(, "requires_grad": false})";
  };
  const double kMagnitudes[] = {1.2345678901234567e-4, 3.4105026721954346, 123456.78901234567, 7e-300, 0.5};
  const double kRelatives[] = {0, 0.1, 0.5, 1e-16, 1e-13, 1e-12, 1e-11, 2.5e-3, 0.05, 1.0};
  std::string bench = R"({"task": "statistics", "level": "L1", "data": {)", npu = bench;
  int apis = 0;
  for (int n = 0; n < 3000; ++n) {
    double in_y = kMagnitudes[random() % 5] * (1 + static_cast<double>(random() % 1000) / 1000);
    double out_y = kMagnitudes[random() % 5] * (1 + static_cast<double>(random() % 1000) / 1000);
    double in_rel = kRelatives[random() % 10], out_rel = kRelatives[random() % 10];
    if (random() % 4 == 0) out_rel = in_rel * 10;  // the warning's ratio, on the edge
    auto nudge = [&random](double v) {  // on the value, or a few ulps either side
      int steps = static_cast<int>(random() % 7) - 3;
      for (; steps > 0; --steps) v = std::nextafter(v, INFINITY);
      for (; steps < 0; ++steps) v = std::nextafter(v, -INFINITY);
      return v;
    };
    double in_x = nudge(in_y * (1 + in_rel)), out_x = nudge(out_y * (1 + out_rel));
    std::string name = std::string(apis ? ",\n" : "\n") + "\"Torch.mul." + std::to_string(apis) + ".forward\": ";
    ++apis;
    bench += name + "{\"input_args\": [" + leaf(in_y) + "], \"output\": [" + leaf(out_y) + "]}";
    npu += name + "{\"input_args\": [" + leaf(in_x) + "], \"output\": [" + leaf(out_x) + "]}";
  }
  bench += "}}";
  npu += "}}";
  auto bench_dump = ParseDumpJson(bench, "bench.json");
  auto npu_dump = ParseDumpJson(npu, "npu.json");
  ASSERT_TRUE(bench_dump.ok()) << bench_dump.status().ToString();
  ASSERT_TRUE(npu_dump.ok()) << npu_dump.status().ToString();
  auto table = Compare(*npu_dump, *bench_dump, {});
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(table->rows.size(), 2u * apis);
  int errors = 0, warnings = 0;
  for (int a = 0; a < apis; ++a) {
    const CompareRow& in = table->rows[2 * a];
    const CompareRow& out = table->rows[2 * a + 1];
    auto in_v = table->NormRelative(in), out_v = table->NormRelative(out);
    double in_max = in_v.percent && !std::isnan(in_v.value) ? std::max(0.0, in_v.value) : 0.0;
    double out_max = out_v.percent && !std::isnan(out_v.value) ? std::max(0.0, out_v.value) : 0.0;
    bool error = in_max < 0.1 && std::fabs(out_v.value) > 0.5;
    bool warn = in_max == 0 ? out_max > 0.1 : out_max / in_max > 10;
    EXPECT_EQ((out.checks & kRelativeError) != 0, error) << a;
    EXPECT_EQ((out.checks & kRelativeWarning) != 0, warn) << a;
    errors += error;
    warnings += warn;
  }
  EXPECT_GT(errors, 100);  // both outcomes occur, so the test can tell a wrong decision
  EXPECT_GT(warnings, 100);
  EXPECT_LT(errors, apis - 100);
  EXPECT_LT(warnings, apis - 100);
}

std::string EntriesDump(const std::vector<std::pair<std::string, double>>& entries) {
  std::string text = R"({"task": "statistics", "level": "L1", "data": {)";
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string leaf = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": )" +
                       PyFloatRepr(entries[i].second) + "}";
    text += (i ? ",\n\"" : "\n\"") + entries[i].first + "\": {\"input_args\": [" + leaf + "], \"output\": [" + leaf + "]}";
  }
  return text + "}}";
}

// Entries out of order (the index finds them), and a key the baseline holds twice: the
// first one is matched, as msprobe's merge keeps the first.
TEST(Compare, MatchesEntriesOutOfOrderAndTheFirstOfADuplicateKey) {
  auto bench = ParseDumpJson(EntriesDump({{"Torch.add.0.forward", 1}, {"Torch.mul.0.forward", 2},
                                          {"Torch.add.0.forward", 3}, {"Torch.sub.0.forward", 4}}),
                             "bench.json");
  auto npu = ParseDumpJson(EntriesDump({{"Torch.sub.0.forward", 4}, {"Torch.add.0.forward", 1}, {"Torch.mul.0.forward", 2}}),
                           "npu.json");
  ASSERT_TRUE(bench.ok() && npu.ok());
  ASSERT_EQ(bench->entries.size(), 4u);
  auto table = Compare(*npu, *bench, {});
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(table->rows.size(), 6u);
  const uint32_t want_bench_entry[] = {3, 3, 0, 0, 1, 1};
  for (size_t i = 0; i < 6; ++i) {
    const Row* b = table->BenchRow(table->rows[i]);
    ASSERT_NE(b, nullptr) << i;
    EXPECT_EQ(b->entry, want_bench_entry[i]) << i;
    EXPECT_TRUE(table->Identical(table->rows[i])) << i;
  }
  EXPECT_EQ(table->bench_rows_unmatched, 2u);  // the duplicate's two rows
}

// msprobe counts a row as an output when ".output." appears anywhere in its name, the
// entry's part included (".outputs." does not count).
TEST(Compare, AnEntryNamedWithOutputMakesItsRowsOutputs) {
  auto bench = ParseDumpJson(EntriesDump({{"Module.block.output.Linear.forward.0", 1}, {"Module.outputs.Linear.forward.0", 1}}),
                             "bench.json");
  auto npu = ParseDumpJson(EntriesDump({{"Module.block.output.Linear.forward.0", 4}, {"Module.outputs.Linear.forward.0", 4}}),
                           "npu.json");
  ASSERT_TRUE(bench.ok() && npu.ok());
  auto table = Compare(*npu, *bench, {});
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(table->rows.size(), 4u);
  // All outputs: no input bounds the error, every row's 300% is > 50%.
  EXPECT_TRUE(table->rows[0].checks & kRelativeError);
  EXPECT_TRUE(table->rows[1].checks & kRelativeError);
  // An input at 300%: the output's error is not flagged (inputs already differ).
  EXPECT_FALSE(table->rows[2].checks & kRelativeError);
  EXPECT_FALSE(table->rows[3].checks & kRelativeError);
}

TEST(Compare, DtypeGateUnmatchesIncompatibleDtypes) {
  auto bench = ParseDumpJson(StatDump("1.0", "torch.int64", "1.0"), "bench.json");
  auto npu = ParseDumpJson(StatDump("1.0", "torch.float32", "1.0"), "npu.json");
  ASSERT_TRUE(bench.ok() && npu.ok());
  auto table = Compare(*npu, *bench, {});
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(table->rows[1].dtype_gate_failed);
  EXPECT_EQ(table->rows[1].bench, -1);
  EXPECT_EQ(table->BenchStat(table->rows[1], 0), "N/A");
  DiffCriteria criteria;
  auto diff = FindFirstDiff(FactsFromTable(*table, criteria), criteria);
  ASSERT_TRUE(diff.entry);
  EXPECT_EQ(diff.verdict, "operator");  // its input matched; the output has no counterpart
}

TEST(Compare, RefusesDumpsOfDifferentModes) {
  auto stats = ParseDumpJson(StatDump("1.0", "torch.float32", "1.0"), "stats.json");
  auto md5 = ParseDumpJson(kMd5WithScalars, "md5.json");
  ASSERT_TRUE(stats.ok() && md5.ok());
  auto table = Compare(*stats, *md5, {});
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find("different modes"), std::string::npos);
}

TEST(Compare, RenamesWithoutCounterLikeMsprobe) {
  EXPECT_EQ(RenameWithoutCounter("Functional.linear.5.forward.input.0"), "Functional.linear.forward.input.0");
  EXPECT_EQ(RenameWithoutCounter("Module.fc1.Linear.forward.0.output.0"), "Module.fc1.forward.0.output.0");
  EXPECT_EQ(EntryOfRowName("Functional.linear.5.forward.input.0"), "Functional.linear.5.forward");
  EXPECT_EQ(EntryOfRowName("Module.fc1.Linear.forward.0.output.0"), "Module.fc1.Linear.forward.0");
  EXPECT_EQ(EntryOfRowName("Module.fc1.Linear.parameters_grad.0.weight"), "Module.fc1.Linear.parameters_grad.0");
}

// Rows across several 4 MiB chunks (the first mapped lazily, the others populated): every
// record where it was put, by index and by iteration, 64-byte aligned.
TEST(DumpReader, ChunkedRowsKeepEveryRecordAcrossChunks) {
  ChunkedVector<Row> rows;
  const uint32_t count = 3 * (4u << 20) / sizeof(Row) + 17;
  for (uint32_t i = 0; i < count; ++i) {
    Row row;
    row.suffix = i;
    row.values[2] = i * 0.5;
    rows.push_back(row);
  }
  ASSERT_EQ(rows.size(), count);
  uint32_t at = 0;
  for (const Row& row : rows) {
    ASSERT_EQ(row.suffix, at);
    ASSERT_EQ(row.values[2], at * 0.5);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(&row) % 64, 0u);
    ++at;
  }
  EXPECT_EQ(at, count);
  EXPECT_EQ(rows[count - 1].suffix, count - 1);
  EXPECT_EQ(rows[(4u << 20) / sizeof(Row)].suffix, (4u << 20) / sizeof(Row));
}

// The suffix cache: a hit is the id of that very text, at every length (short texts are
// hashed from a partial word, long ones from their ends), and colliding texts only evict.
TEST(DumpReader, SuffixCacheAnswersOnlyForTheSameText) {
  internal::TextCache cache;
  std::vector<std::string> texts = {""};  // distinct texts, all kept alive (the cache holds views)
  for (size_t size = 1; size <= 40; ++size) {
    for (char c : {'a', 'b'}) {
      std::string text(size, '.');
      text.back() = c;
      if (size > 3) text[size / 2] = c;
      texts.push_back(text);
    }
  }
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < texts.size(); ++i) {
      uint32_t id = cache.Find(texts[i]);
      EXPECT_TRUE(id == 0 || id == i + 1) << texts[i] << " " << id;
      cache.Add(texts[i], static_cast<uint32_t>(i + 1));
      EXPECT_EQ(cache.Find(texts[i]), i + 1) << texts[i];
    }
  }
}

// The recent-text cache's compare: equal only when every byte is, at every length and
// difference position (the word compares overlap for 4-7 and 8-16 bytes).
TEST(DumpReader, RecentTextCompareSeesEveryByte) {
  for (size_t size = 0; size <= 24; ++size) {
    std::string a(size, 'x');
    for (size_t i = 0; i < size; ++i) a[i] = static_cast<char>('a' + i);
    std::string b = a;
    EXPECT_TRUE(internal::SameBytes(a.data(), b.data(), size)) << size;
    for (size_t at = 0; at < size; ++at) {
      std::string c = a;
      c[at] ^= 0x20;
      EXPECT_FALSE(internal::SameBytes(a.data(), c.data(), size)) << size << " " << at;
    }
  }
}

}  // namespace
}  // namespace parity::msprobe
