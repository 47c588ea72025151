#include "domain/msprobe/compare_csv.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <cmath>
#include <optional>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "domain/msprobe/pyrepr.h"
#include "support/subprocess.h"
#include "support/file_read.h"
#include "support/safe_file.h"

namespace parity::msprobe {

using json = nlohmann::json;

namespace {

constexpr uint64_t kMaxTableBytes = uint64_t{2} << 30;

const std::vector<std::string> kBasic = {"NPU Name",         "Bench Name",         "NPU Dtype",
                                         "Bench Dtype",      "NPU Tensor Shape",   "Bench Tensor Shape",
                                         "NPU Requires_grad", "Bench Requires_grad"};
const std::vector<std::string> kSummaryIndex = {"Max diff",       "Min diff",       "Mean diff",
                                                "L2norm diff",    "MaxRelativeErr", "MinRelativeErr",
                                                "MeanRelativeErr", "NormRelativeErr"};
const std::vector<std::string> kAllIndex = {"Cosine",         "EucDist",
                                            "MaxAbsErr",      "MaxRelativeErr",
                                            "One Thousandth Err Ratio", "Five Thousandths Err Ratio"};
const std::vector<std::string> kSummaryInfo = {"NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
                                               "Bench max", "Bench min", "Bench mean", "Bench l2norm"};
const std::vector<std::string> kExtract = {"Requires_grad Consistent", "Result", "Err_message"};

// A growing text written through a plain pointer: every append is inlined (std::string's
// appends were not, and were about a sixth of the table's cost).
class TextOut {
 public:
  void Clear() { size_ = 0; }
  void Put(char c) {
    Reserve(1);
    data_[size_++] = c;
  }
  void Put(std::string_view text) {
    Reserve(text.size());
    std::memcpy(data_.get() + size_, text.data(), text.size());
    size_ += text.size();
  }
  std::string_view View() const { return {data_.get(), size_}; }

 private:
  void Reserve(size_t more) {
    if (capacity_ - size_ >= more) return;
    const size_t capacity = std::max(capacity_ * 2, size_ + more + 4096);
    std::unique_ptr<char[]> data(new char[capacity]);
    if (size_) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }
  std::unique_ptr<char[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

bool NeedsQuotes(std::string_view value) {
  bool quote = false;
  for (char c : value) quote |= c == ',' || c == '"' || c == '\n' || c == '\r';
  return quote;
}

void CsvField(TextOut& line, std::string_view value) {
  if (!NeedsQuotes(value)) {
    line.Put(value);
    return;
  }
  line.Put('"');
  while (true) {  // quotes doubled, the rest copied in runs
    size_t quote_at = value.find('"');
    line.Put(value.substr(0, quote_at));
    if (quote_at == std::string_view::npos) break;
    line.Put("\"\"");
    value.remove_prefix(quote_at + 1);
  }
  line.Put('"');
}

// One CSV record, field by field, appended to a buffer.
class CsvLine {
 public:
  explicit CsvLine(TextOut& line) : line_(line) {}  // appends to `line`
  CsvLine& operator<<(std::string_view value) {
    Separate();
    CsvField(line_, value);
    return *this;
  }
  // A field known to need no quoting (numbers, "N/A", "True", msprobe's diff texts).
  CsvLine& Plain(std::string_view value) {
    Separate();
    line_.Put(value);
    return *this;
  }
  // A row name: entry name + suffix, written without building it.
  CsvLine& Name(std::string_view entry, std::string_view suffix) {
    Separate();
    if (NeedsQuotes(entry) || NeedsQuotes(suffix)) {
      CsvField(line_, std::string(entry) + std::string(suffix));
    } else {
      line_.Put(entry);
      line_.Put(suffix);
    }
    return *this;
  }

 private:
  void Separate() {
    if (!first_) line_.Put(',');
    first_ = false;
  }
  TextOut& line_;
  bool first_ = true;
};

// One statistic of one side, as msprobe's CSV holds it: the number's text (kept for the
// diff cells), " inf" / " -inf" (pandas writes float inf so, for Excel), or the table text.
struct StatText {
  char buf[kPyFloatReprMax];
  std::string_view number;  // set for finite numbers
  std::string other;

  // `table_text` makes the cell's text when it is not a finite number (a template, not a
  // std::function: that allocated for each of the row's eight statistics).
  template <typename TableText>
  void Set(const StatValue& value, const TableText& table_text) {
    number = {};
    if (value.kind == StatValue::Kind::kNumber && std::isinf(value.number)) {
      other = value.number > 0 ? " inf" : " -inf";
    } else if (value.kind == StatValue::Kind::kNumber && !std::isnan(value.number)) {
      number = std::string_view(buf, NumberText(value, buf));
    } else {
      other = table_text();
    }
  }
  void CopyFrom(const StatText& o) {
    number = {};
    if (o.number.empty()) {
      other = o.other;
    } else {
      std::memcpy(buf, o.buf, o.number.size());
      number = std::string_view(buf, o.number.size());
    }
  }
  void Write(CsvLine& line) const {
    if (number.empty()) line << other;
    else line.Plain(number);
  }
};

std::string PyList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += PyStrRepr(items[i]);
  }
  return out + "]";
}

}  // namespace

std::vector<std::string> CompareHeader(DumpMode mode, bool with_stack) {
  std::vector<std::string> h = kBasic;
  if (mode == DumpMode::kMd5) {
    h.insert(h.end(), {"NPU MD5", "BENCH MD5"});
  } else {
    const auto& index = mode == DumpMode::kAll ? kAllIndex : kSummaryIndex;
    h.insert(h.end(), index.begin(), index.end());
    h.insert(h.end(), kSummaryInfo.begin(), kSummaryInfo.end());
  }
  h.insert(h.end(), kExtract.begin(), kExtract.end());
  if (with_stack) h.push_back("NPU_Stack_Info");
  if (mode == DumpMode::kAll) h.push_back("Data_name");
  return h;
}

namespace {

// Formats rows [from, to) of the table into text: one per thread, each with its own caches,
// so that blocks of rows are formatted side by side and come out byte for byte as one pass.
class RowFormatter {
 public:
  RowFormatter(const CompareTable& table, const StackIndex* stacks) : table_(table), stacks_(stacks) {}

  void Format(size_t from, size_t to, TextOut& out) {
    out.Clear();
    const Dump& npu = *table_.npu;
    // The stack column is written on an entry's first row only: the row before the block
    // says whether `from` starts a new entry.
    uint32_t previous_entry = from == 0 ? UINT32_MAX : table_.NpuRow(table_.rows[from - 1]).entry;
    for (size_t i = from; i < to; ++i) {
      const CompareRow& r = table_.rows[i];
      Row(r, previous_entry, out);
      previous_entry = table_.NpuRow(r).entry;
    }
  }

 private:
  void Row(const CompareRow& r, uint32_t previous_entry, TextOut& out) {
    const CompareTable& table = table_;
    const Dump& npu = *table.npu;
    const Dump& bench = *table.bench;
    const parity::msprobe::Row& n = table.NpuRow(r);
    const parity::msprobe::Row* b = table.BenchRow(r);
    CsvLine cells(out);
    cells.Name(npu.entries[n.entry].name, npu.Text(n.suffix));
    if (b) cells.Name(bench.entries[b->entry].name, bench.Text(b->suffix));
    else cells << "N/A";
    cells << npu.Text(n.dtype) << (b ? std::string_view(bench.Text(b->dtype)) : "N/A");
    cells << npu.Text(n.shape) << (b ? std::string_view(bench.Text(b->shape)) : "N/A");
    cells << npu.RequiresGradString(n) << (b ? bench.RequiresGradString(*b) : "N/A");
    if (table.mode == DumpMode::kMd5) {
      cells << npu.Md5String(n) << (b ? bench.Md5String(*b) : "N/A");
    } else {
      if (table.mode == DumpMode::kAll) {
        // Real-data metrics need the .pt tensors; parity does not compute them (N/A).
        for (int i = 0; i < 6; ++i) cells.Plain("N/A");
      }
      std::array<bool, 4> same{};  // the statistic is equal on both sides
      for (int s = 0; s < 4; ++s) {
        same[s] = b && table.SameStatAt(r, s);
        npu_stats_[s].Set(n.stat(s), [&] { return table.NpuStat(r, s); });
        if (!b) continue;
        // A statistic equal on both sides prints the same: its text is not made twice.
        if (same[s]) bench_stats_[s].CopyFrom(npu_stats_[s]);
        else bench_stats_[s].Set(b->stat(s), [&] { return table.BenchStat(r, s); });
      }
      if (table.mode == DumpMode::kSummary) {
        for (int s = 0; s < 4; ++s) {
          if (same[s]) {
            diffs_[s] = "0";
            diffs_[s + 4] = "0";
          } else if (b && !npu_stats_[s].number.empty() && !bench_stats_[s].number.empty()) {
            NumberDiffTexts(n.stat(s).number, npu_stats_[s].number, b->stat(s).number, bench_stats_[s].number,
                            &diffs_[s], &diffs_[s + 4]);
          } else {
            diffs_[s] = table.DiffText(r, s, false);
            diffs_[s + 4] = table.DiffText(r, s, true);
          }
        }
        for (const std::string& diff : diffs_) cells.Plain(diff);  // numbers, "N/A", "Nan", "inf", "Diff", "x%"
      }
      for (const StatText& stat : npu_stats_) stat.Write(cells);
      for (const StatText& stat : bench_stats_) {
        if (b) stat.Write(cells);
        else cells.Plain("N/A");
      }
    }
    cells << (r.requires_grad_consistent ? "True" : "False") << LevelName(r.level);
    std::optional<std::string>& message = messages_[r.checks & (messages_.size() - 1)];
    if (!message) message = json(table.Messages(r)).dump();
    cells << *message;
    if (stacks_) {
      const std::vector<std::string>* frames = n.entry != previous_entry ? stacks_->Find(npu.entries[n.entry].name) : nullptr;
      cells << (frames ? PyList(*frames) : "N/A");
    }
    if (table.mode == DumpMode::kAll) {
      std::string nd = n.data_name ? npu.Text(n.data_name) : "-1";
      std::string bd = b ? (b->data_name ? bench.Text(b->data_name) : "-1") : "N/A";
      cells << PyList({nd, bd});
    }
    out.Put('\n');
  }

  const CompareTable& table_;
  const StackIndex* stacks_;
  std::array<std::optional<std::string>, 1u << 9> messages_;  // Err_message text per set of checks
  std::array<std::string, 8> diffs_;  // "Max diff".."L2norm diff", "MaxRelativeErr".."NormRelativeErr"
  std::array<StatText, 4> npu_stats_, bench_stats_;
};

}  // namespace

Status WriteCompareCsv(const CompareTable& table, const StackIndex* stacks, const std::filesystem::path& path,
                       const CsvWriteOptions& options) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  // Streamed into a temporary file beside the target, renamed over it at the end; neither
  // follows a symlink (a report directory may come from a cloned repository).
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  PARITY_ASSIGN_OR_RETURN(AtomicFileWriter out, AtomicFileWriter::Create(parent, path.filename()));
  TextOut header;
  {
    CsvLine cells(header);
    for (const std::string& name : CompareHeader(table.mode, stacks != nullptr)) cells << name;
  }
  header.Put('\n');
  PARITY_RETURN_IF_ERROR(out.Write(header.View()));

  // Blocks of rows (about 1.7 MB of text each: one large write(), and the blocks in flight,
  // one per thread, stay small next to the dumps) are formatted by up to one thread per core
  // (formatting numbers is most of the cost) and written in order: a thread that has
  // formatted block k waits for block k - 1 to be written, writes its own, and takes the
  // next unformatted block.
  const size_t block_rows = std::max<size_t>(options.block_rows, 1);
  const size_t blocks = (table.rows.size() + block_rows - 1) / block_rows;
  const size_t threads = options.threads ? options.threads : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::atomic<size_t> next_block{0};
  std::mutex mutex;
  std::condition_variable written_cv;
  size_t written = 0;            // blocks written, under `mutex`
  Status status = Status::Ok();  // the first error, under `mutex`: every thread then stops
  auto fail = [&](Status s) {
    std::lock_guard lock(mutex);
    if (status.ok()) status = std::move(s);
    written_cv.notify_all();
  };
  auto work = [&] {
    try {
      RowFormatter formatter(table, stacks);
      TextOut text;
      for (size_t k = next_block++; k < blocks; k = next_block++) {
        formatter.Format(k * block_rows, std::min(table.rows.size(), (k + 1) * block_rows), text);
        std::unique_lock lock(mutex);
        written_cv.wait(lock, [&] { return written == k || !status.ok(); });
        if (!status.ok()) return;
        lock.unlock();
        Status s = out.Write(text.View());  // only the thread whose turn it is writes
        if (!s.ok()) return fail(std::move(s));
        lock.lock();
        ++written;
        written_cv.notify_all();
      }
    } catch (const std::exception& e) {  // e.g. a text nlohmann cannot encode
      fail(Internal("writing " + path.string() + ": " + e.what()));
    }
  };
  if (blocks <= 1 || threads == 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    try {
      for (size_t t = 1; t < std::min(threads, blocks); ++t) pool.emplace_back(work);
    } catch (const std::system_error&) {
      // No more threads (a process limit): the blocks are taken by those that started and
      // by this one, so the table is the same, only written with fewer threads.
    }
    work();
  }  // the pool is joined here
  PARITY_RETURN_IF_ERROR(status);
  PARITY_RETURN_IF_ERROR(out.Commit());
  return Status::Ok();
}

int TextTable::Column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Result<TextTable> ParseCsv(std::string_view text, const std::string& origin) {
  TextTable table;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  size_t line = 1;
  auto end_record = [&]() {
    record.push_back(std::move(field));
    field.clear();
    if (table.header.empty()) table.header = std::move(record);
    else if (!(record.size() == 1 && record[0].empty())) table.rows.push_back(std::move(record));
    record.clear();
  };
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // BOM
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      field_started = false;
      ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted) return InvalidArgument(origin + ": unterminated quoted field (line " + std::to_string(line) + ")");
  if (!field.empty() || !record.empty()) end_record();
  if (table.header.empty()) return InvalidArgument(origin + ": empty table");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (table.rows[r].size() != table.header.size()) {
      return InvalidArgument(origin + ": row " + std::to_string(r + 2) + " has " + std::to_string(table.rows[r].size()) +
                             " cells, the header has " + std::to_string(table.header.size()));
    }
  }
  return table;
}

Result<TextTable> ReadCompareCsv(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadFileLimited(path, kMaxTableBytes));
  return ParseCsv(text, path.string());
}

namespace {

std::string XmlUnescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) {
      out += s[i];
      continue;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp") out += '&';
    else if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (!ent.empty() && ent[0] == '#') {
      unsigned long code = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X')
                               ? std::stoul(std::string(ent.substr(2)), nullptr, 16)
                               : std::stoul(std::string(ent.substr(1)));
      if (code < 0x80) out += static_cast<char>(code);
      else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
      } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
      }
    } else {
      out += s.substr(i, semi - i + 1);
    }
    i = semi;
  }
  return out;
}

// Concatenated text of every <t>...</t> between `begin` and `end` in `xml`.
std::string TextRuns(std::string_view xml) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t t = xml.find("<t", pos);
    if (t == std::string_view::npos) break;
    char after = t + 2 < xml.size() ? xml[t + 2] : '\0';
    if (after != '>' && after != ' ') {
      pos = t + 2;
      continue;
    }
    size_t open_end = xml.find('>', t);
    if (open_end == std::string_view::npos) break;
    if (xml[open_end - 1] == '/') {  // <t/>
      pos = open_end + 1;
      continue;
    }
    size_t close = xml.find("</t>", open_end);
    if (close == std::string_view::npos) break;
    out += XmlUnescape(xml.substr(open_end + 1, close - open_end - 1));
    pos = close + 4;
  }
  return out;
}

std::string Attribute(std::string_view tag, std::string_view name) {
  std::string key = " " + std::string(name) + "=\"";
  size_t at = tag.find(key);
  if (at == std::string_view::npos) return {};
  size_t start = at + key.size();
  size_t end = tag.find('"', start);
  return std::string(tag.substr(start, end - start));
}

Result<std::string> UnzipMember(const std::filesystem::path& archive, const std::string& member, bool required) {
  ProcessOptions options;
  options.argv = {"unzip", "-p", archive.string(), member};
  options.timeout = std::chrono::seconds(120);
  options.output_cap = kMaxTableBytes;
  auto run = RunProcess(options);
  if (!run.ok()) {
    return std::move(run).take_status().Context("reading " + archive.string() + " (xlsx needs the unzip program)");
  }
  if (!run->success()) {
    if (!required) return std::string();
    return ProcessFailure("extracting " + member + " from " + archive.string(), options, *run);
  }
  return std::move(run->out);
}

}  // namespace

Result<TextTable> ReadCompareXlsx(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path.string() + ": no such file");
  PARITY_ASSIGN_OR_RETURN(std::string shared_xml, UnzipMember(path, "xl/sharedStrings.xml", false));
  PARITY_ASSIGN_OR_RETURN(std::string sheet, UnzipMember(path, "xl/worksheets/sheet1.xml", true));
  std::vector<std::string> shared;
  for (size_t pos = 0;;) {
    size_t si = shared_xml.find("<si>", pos);
    if (si == std::string::npos) break;
    size_t end = shared_xml.find("</si>", si);
    if (end == std::string::npos) break;
    shared.push_back(TextRuns(std::string_view(shared_xml).substr(si, end - si)));
    pos = end + 5;
  }
  std::vector<std::vector<std::string>> grid;
  for (size_t pos = 0;;) {
    size_t row_at = sheet.find("<row", pos);
    if (row_at == std::string::npos) break;
    size_t row_end = sheet.find("</row>", row_at);
    if (row_end == std::string::npos) break;
    std::string_view row_xml = std::string_view(sheet).substr(row_at, row_end - row_at);
    std::vector<std::string> cells;
    for (size_t cpos = 0;;) {
      size_t c = row_xml.find("<c ", cpos);
      if (c == std::string_view::npos) break;
      size_t tag_end = row_xml.find('>', c);
      std::string_view tag = row_xml.substr(c, tag_end - c + 1);
      std::string ref = Attribute(tag, "r");
      size_t column = 0;
      for (char ch : ref) {
        if (ch < 'A' || ch > 'Z') break;
        column = column * 26 + static_cast<size_t>(ch - 'A' + 1);
      }
      if (column == 0) column = cells.size() + 1;
      std::string type = Attribute(tag, "t");
      std::string value;
      size_t cell_end;
      if (tag.size() >= 2 && tag[tag.size() - 2] == '/') {
        cell_end = tag_end + 1;
      } else {
        cell_end = row_xml.find("</c>", tag_end);
        std::string_view body = row_xml.substr(tag_end + 1, cell_end - tag_end - 1);
        if (type == "inlineStr") {
          value = TextRuns(body);
        } else {
          size_t v = body.find("<v>");
          size_t v_end = body.find("</v>");
          std::string raw = v == std::string_view::npos ? std::string() : XmlUnescape(body.substr(v + 3, v_end - v - 3));
          if (type == "s") {
            size_t index = raw.empty() ? 0 : std::stoul(raw);
            if (index >= shared.size()) return InvalidArgument(path.string() + ": shared string " + raw + " out of range");
            value = shared[index];
          } else if (type == "b") {
            value = raw == "1" ? "True" : "False";
          } else {
            value = raw;
          }
        }
        cell_end += 4;
      }
      if (cells.size() < column) cells.resize(column);
      cells[column - 1] = value;
      cpos = cell_end;
    }
    grid.push_back(std::move(cells));
    pos = row_end + 6;
  }
  if (grid.empty()) return InvalidArgument(path.string() + ": the first worksheet is empty");
  TextTable table;
  table.header = grid.front();
  while (!table.header.empty() && table.header.back().empty()) table.header.pop_back();
  for (size_t i = 1; i < grid.size(); ++i) {
    grid[i].resize(table.header.size());
    table.rows.push_back(std::move(grid[i]));
  }
  return table;
}

Result<DumpMode> ModeOfTable(const TextTable& table, const std::string& origin) {
  if (table.Column("NPU Name") < 0 || table.Column("Bench Name") < 0) {
    return InvalidArgument(origin + ": not an msprobe compare result (no \"NPU Name\" / \"Bench Name\" columns)");
  }
  if (table.Column("NPU MD5") >= 0) return DumpMode::kMd5;
  if (table.Column("Cosine") >= 0) return DumpMode::kAll;
  if (table.Column("Max diff") >= 0) return DumpMode::kSummary;
  return InvalidArgument(origin + ": cannot tell the compare mode (no NPU MD5, Cosine or Max diff column)");
}

Result<DiffInput> FactsFromTextTable(const TextTable& table, const DiffCriteria& criteria, const std::string& origin) {
  PARITY_ASSIGN_OR_RETURN(DumpMode mode, ModeOfTable(table, origin));
  int name = table.Column("NPU Name"), bench_name = table.Column("Bench Name");
  int npu_dtype = table.Column("NPU Dtype"), bench_dtype = table.Column("Bench Dtype");
  int npu_shape = table.Column("NPU Tensor Shape"), bench_shape = table.Column("Bench Tensor Shape");
  int result = table.Column("Result");
  if (result < 0) result = table.Column("Accuracy Reached or Not");
  int npu_md5 = table.Column("NPU MD5"), bench_md5 = table.Column("BENCH MD5");
  const char* kStats[4] = {"max", "min", "mean", "l2norm"};
  int npu_stat[4], bench_stat[4];
  for (int s = 0; s < 4; ++s) {
    npu_stat[s] = table.Column(std::string("NPU ") + kStats[s]);
    bench_stat[s] = table.Column(std::string("Bench ") + kStats[s]);
  }
  if (npu_dtype < 0 || npu_shape < 0 || result < 0) {
    return InvalidArgument(origin + ": missing one of the columns NPU Dtype, NPU Tensor Shape, Result");
  }
  DiffInput input;
  std::map<std::string, uint32_t> entry_ids;
  std::string previous;
  for (const auto& row : table.rows) {
    std::string entry = EntryOfRowName(row[name]);
    if (input.entries.empty() || entry != previous) {
      input.owned_entries.push_back(entry);
      input.entries.push_back(input.owned_entries.back());
      previous = entry;
    }
    RowFacts f;
    f.entry = static_cast<uint32_t>(input.entries.size() - 1);
    const std::string& n = row[name];
    f.output = n.find(".output.") != std::string::npos || n.find(".parameters_grad.") != std::string::npos;
    f.tensor = row[npu_dtype].find("class") == std::string::npos;
    f.matched = row[bench_name] != "N/A" && !row[bench_name].empty();
    bool same_meta = row[npu_dtype] == (bench_dtype >= 0 ? row[bench_dtype] : "") &&
                     row[npu_shape] == (bench_shape >= 0 ? row[bench_shape] : "");
    if (mode == DumpMode::kMd5) {
      f.identical = f.matched && same_meta && npu_md5 >= 0 && bench_md5 >= 0 && row[npu_md5] == row[bench_md5];
      f.exceeds = f.matched && !f.identical;
    } else {
      bool same = f.matched && same_meta;
      bool exceeds = !same_meta;
      for (int s = 0; s < 4; ++s) {
        if (npu_stat[s] < 0 || bench_stat[s] < 0) continue;
        const std::string& a = row[npu_stat[s]];
        const std::string& b = row[bench_stat[s]];
        if (a == b) continue;
        same = false;
        auto x = PyParseFloat(a), y = PyParseFloat(b);
        if (!x || !y || std::isnan(*x) || std::isnan(*y) || std::isinf(*x) || std::isinf(*y) ||
            std::fabs(*x - *y) > criteria.abs_tol + criteria.rel_tol * std::fabs(*y)) {
          exceeds = true;
        }
      }
      f.identical = same;
      f.exceeds = f.matched && exceeds;
    }
    const std::string& level = row[result];
    if (level == "error" || level == "No" || level == "Different") f.level = Level::kError;
    else if (level == "warning" || level == "Warning") f.level = Level::kWarning;
    else f.level = Level::kPass;
    input.rows.push_back(f);
    if (mode == DumpMode::kMd5) {
      // Value keys for the noise rules' data flow: the CRC with a hash of shape and dtype.
      auto key = [&](int md5_col, int shape_col, int dtype_col) -> uint64_t {
        if (!f.tensor || md5_col < 0 || shape_col < 0 || dtype_col < 0) return 0;
        const std::string& crc = row[md5_col];
        if (crc.size() != 8 || crc.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return 0;
        size_t h = std::hash<std::string>()(row[shape_col]) * 31 + std::hash<std::string>()(row[dtype_col]);
        return (uint64_t{1} << 63) | (uint64_t{static_cast<uint32_t>(h ^ (h >> 32)) & 0x7fffffffu} << 32) |
               std::stoul(crc, nullptr, 16);
      };
      input.npu_value.push_back(key(npu_md5, npu_shape, npu_dtype));
      input.bench_value.push_back(f.matched ? key(bench_md5, bench_shape, bench_dtype) : 0);
    }
  }
  input.statistics_only = mode != DumpMode::kMd5;
  input.row_text = [&table, name, bench_name, npu_dtype, bench_dtype, npu_max = npu_stat[0], bench_max = bench_stat[0]](size_t i) {
    const auto& row = table.rows[i];
    RowText t;
    t.name = row[name];
    if (row[bench_name] == "N/A" || row[bench_name].empty()) {
      t.detail = "no baseline counterpart";
      return t;
    }
    if (row[npu_dtype].find("class") != std::string::npos && npu_max >= 0 && bench_max >= 0) {
      t.candidate = row[npu_max];
      t.baseline = row[bench_max];
    }
    if (bench_dtype >= 0 && row[npu_dtype] != row[bench_dtype]) {
      t.detail = "dtype " + row[npu_dtype] + " in the candidate, " + row[bench_dtype] + " in the baseline";
    }
    return t;
  };
  input.describe = [&table](size_t i) {
    json out = json::object();
    for (size_t c = 0; c < table.header.size(); ++c) {
      if (table.header[c] == "NPU_Stack_Info") continue;
      out[table.header[c]] = table.rows[i][c];
    }
    return out;
  };
  return input;
}

}  // namespace parity::msprobe
