#include "analyzer/cli/output.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "analyzer/analysis/summary_file.h"
#include "plugins/load/load.h"
#include "tracer/format/printable.h"

namespace shardscope::cli {
namespace fs = std::filesystem;

std::string input_at(const std::string& output, const std::vector<std::string>& inputs) {
  std::error_code ec;
  if (output.empty() || output == "-" || !fs::exists(output, ec)) return "";
  std::vector<fs::path> files;
  for (const std::string& in : inputs) {
    files.emplace_back(in);
    if (!fs::is_directory(in, ec)) continue;
    try {
      std::vector<std::string> refusals;
      const plugins::Registry registry = analysis::formats_registry(refusals);
      for (fs::path& f : plugins::expand_inputs({fs::path(in)}, &registry)) files.push_back(std::move(f));
    } catch (const std::exception&) {
      // A directory the loader cannot list is its error to say, after this check.
    }
  }
  for (const fs::path& f : files)
    if (fs::equivalent(output, f, ec) && !ec) return f.string();
  return "";
}

std::string overwrite_refusal(const std::string& output, const std::string& input) {
  return fmt::format("refusing to write {} over the input {} (the same file): name another output file", output, input);
}

bool write_output(const std::string& output, const std::string& text, std::ostream& out, std::ostream& err) {
  if (output.empty() || output == "-") {
    errno = 0;
    out << text << std::flush;
    if (!out)
      print_error(err, fmt::format("cannot write to standard output{}",
                                   errno ? fmt::format(": {}", std::strerror(errno)) : ""));
    return bool(out);
  }
  std::ofstream f(output, std::ios::binary | std::ios::trunc);
  if (f) f << text << std::flush;
  if (!f) {
    print_error(err, fmt::format("cannot write {}: {}", output, std::strerror(errno)));
    return false;
  }
  return true;
}

bool write_result(const std::string& format, const Result& result, const std::string& output, std::ostream& out,
                  std::ostream& err) {
  std::string text;
  if (format == "json") text = result.json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  else if (format == "html")
    text = result.html();
  else if (format == "junit")
    text = result.junit();
  else
    text = shown_as_text(result.text(format == "md"));
  return write_output(output, text, out, err);
}

int guarded(std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    print_error(err, e.what());
    return 2;
  }
}

void print_warnings(const std::vector<std::string>& warnings, std::ostream& err) {
  for (const std::string& w : warnings)
    err << "shardscope: warning: " << trace::printable(w, trace::kMaxLineBytes) << "\n";
}

void print_error(std::ostream& err, const std::string& message) {
  err << "shardscope: error: " << trace::printable(message, trace::kMaxLineBytes) << "\n";
}

std::string shown_as_text(std::string text) {
  auto control = [](std::string_view t) {
    for (size_t i = 0; i < t.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(t[i]);
      if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
      if (c == 0xc2 && i + 1 < t.size() && static_cast<unsigned char>(t[i + 1]) <= 0x9f &&
          static_cast<unsigned char>(t[i + 1]) >= 0x80)
        return true;
    }
    return false;
  };
  if (!control(text)) return text;
  std::string out;
  for (size_t at = 0; at <= text.size();) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    out += trace::printable(std::string_view(text).substr(at, nl - at));
    if (nl < text.size()) out += '\n';
    at = nl + 1;
  }
  return out;
}

int finish_stdout(std::ostream& out, std::ostream& err, int rc) {
  if (!out) return rc == 2 ? rc : (print_error(err, "cannot write to standard output"), 2);  // write_output said why
  errno = 0;
  out.flush();
  if (out) return rc;
  print_error(err,
              fmt::format("cannot write to standard output{}", errno ? fmt::format(": {}", std::strerror(errno)) : ""));
  return 2;
}

}  // namespace shardscope::cli
