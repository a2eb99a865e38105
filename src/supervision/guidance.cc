#include "supervision/guidance.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "core/text.h"

namespace ptxbench::supervision {
namespace {

std::vector<std::string> split_list(std::string_view value) {
  std::string v(trim(value));
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    std::size_t comma = v.find(',', pos);
    std::string item(trim(std::string_view(v).substr(pos, comma == std::string::npos ? std::string::npos : comma - pos)));
    if (item.size() >= 2 && (item.front() == '"' || item.front() == '\'') && item.back() == item.front())
      item = item.substr(1, item.size() - 2);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

status check_names(const std::vector<std::string>& names, const std::vector<std::string>& known, const char* what,
                   const std::string& file) {
  for (const auto& n : names) {
    if (n == "*" || contains(known, n)) continue;
    auto close = close_names(n, known);
    return make_error(fmt::format("{}: front matter names {} '{}', which the suite does not have{}", file, what, n,
                                  close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close.front())));
  }
  return ok();
}

}  // namespace

bool guidance_doc::applies_to(const task& t) const {
  return contains(tasks, "*") || contains(problems, "*") || contains(tasks, t.name) || contains(problems, t.problem);
}

std::string guidance_doc::arm() const { return "guidance:" + sha256.substr(0, 8); }

result<guidance_doc> parse_guidance(const std::string& text, const std::string& what) {
  auto lines = split_lines(text);
  auto bad = [&](int line, const std::string& message) {
    return make_error(fmt::format("{}:{}: {}", what, line, message));
  };
  if (lines.empty() || trim(lines[0]) != "---")
    return bad(1, fmt::format("expected a front matter first: a line '---', then 'format: {}', 'tasks: ...' and/or "
                              "'problems: ...', then '---' (docs/supervision.md)",
                              k_guidance_format));
  guidance_doc g;
  std::set<std::string> seen;
  std::size_t end = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (line == "---") {
      end = i;
      break;
    }
    if (line.empty() || line.front() == '#') continue;
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return bad(static_cast<int>(i + 1), "expected 'key: value'");
    std::string key(trim(line.substr(0, colon)));
    std::string_view value = trim(line.substr(colon + 1));
    if (!seen.insert(key).second) return bad(static_cast<int>(i + 1), fmt::format("'{}' is given twice", key));
    if (key == "format") {
      std::string v(value);
      if (v != k_guidance_format)
        return bad(static_cast<int>(i + 1), fmt::format("format is '{}', expected '{}'", v, k_guidance_format));
    } else if (key == "title") {
      g.title = std::string(value);
    } else if (key == "tasks") {
      g.tasks = split_list(value);
    } else if (key == "problems") {
      g.problems = split_list(value);
    } else {
      return bad(static_cast<int>(i + 1), fmt::format("unknown key '{}' (expected format, title, tasks, problems)", key));
    }
  }
  if (end == 0) return bad(1, "the front matter has no closing '---' line");
  if (!seen.count("format")) return bad(1, fmt::format("the front matter needs 'format: {}'", k_guidance_format));
  if (g.tasks.empty() && g.problems.empty())
    return bad(1, "the front matter names no task and no problem family ('tasks: a, b' or 'problems: gemm'; '*' for all)");
  std::string body;
  for (std::size_t i = end + 1; i < lines.size(); ++i) body += std::string(lines[i]) + "\n";
  g.body = std::string(trim(body));
  if (g.body.empty()) return bad(static_cast<int>(end + 1), "the document has no text after its front matter");
  g.sha256 = sha256_hex(text);
  return g;
}

result<guidance_doc> read_guidance(const std::filesystem::path& file, const suite& s) {
  auto text = read_text_file(file, k_max_guidance_bytes);
  if (!text) return text.err();
  auto g = parse_guidance(*text, file.string());
  if (!g) return g.err();
  g->file = file;
  std::vector<std::string> tasks, problems;
  for (const auto& t : s.tasks) {
    tasks.push_back(t.name);
    if (!contains(problems, t.problem)) problems.push_back(t.problem);
  }
  if (auto st = check_names(g->tasks, tasks, "task", file.string()); !st) return st.err();
  if (auto st = check_names(g->problems, problems, "problem family", file.string()); !st) return st.err();
  return g;
}

std::string system_prompt_with_guidance(const std::string& system, const guidance_doc& g) {
  std::string s = system;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  s += "\n\n## Expert guidance\n\n";
  s += "The following guidance was written by experts from the mistakes earlier kernels made on tasks like this one.";
  if (!g.title.empty()) s += fmt::format(" ({})", g.title);
  s += "\n\n" + g.body + "\n";
  return s;
}

}  // namespace ptxbench::supervision
