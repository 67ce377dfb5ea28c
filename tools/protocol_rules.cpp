// The protocol rules table of docs/protocol_checker.md, generated from common/protocol/rules.h.
//
//   protocol_rules                 prints the generated section (markdown)
//   protocol_rules --write DOC     replaces the section between the rules markers of DOC
//   protocol_rules --check DOC     exits 1 if that section of DOC is not what --write would put there
//   protocol_rules --json          the table as JSON, for tools/check_protocol_rules.py
//
// The docs row of a rule is written from the same entry that names its broken twins and that the
// source checks compare with the checker's messages, so editing the table by hand in the docs is
// caught (--check is a CPU test) and the fix is always to edit the header and run --write.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "common/protocol/rules.h"

namespace {

using gemm::protocol::rules::Judge;
using gemm::protocol::rules::kRules;
using gemm::protocol::rules::Rule;
using gemm::protocol::rules::Twin;

constexpr const char* kBegin = "<!-- rules:begin -->";
constexpr const char* kEnd = "<!-- rules:end -->";

// A cell may hold neither a '|' (it would split the row) nor a newline (it would end it).
bool cell_ok(const char* s, const char* rule, const char* field) {
  if (!std::strpbrk(s, "|\n")) return true;
  std::fprintf(stderr, "protocol_rules: rule '%s': its %s holds a '|' or a newline, which would break the table\n",
               rule, field);
  return false;
}

// What the table must be for its rows to make sense at all; the checks against the sources are
// tools/check_protocol_rules.py's.
bool table_ok() {
  bool ok = true;
  std::set<std::string> ids;
  for (const Rule& r : kRules) {
    if (!ids.insert(r.id).second) {
      std::fprintf(stderr, "protocol_rules: rule '%s' is in the table twice\n", r.id);
      ok = false;
    }
    ok &= cell_ok(r.id, r.id, "id") && cell_ok(r.catches, r.id, "description") && cell_ok(r.ptx, r.id, "sections") &&
          cell_ok(r.stricter, r.id, "stricter text") &&
          cell_ok(r.no_twin_because, r.id, "no-twin reason");
    for (const Twin& t : r.twins)
      if (t.name) ok &= cell_ok(t.name, r.id, "twin") && cell_ok(t.note, r.id, "twin note");
  }
  return ok;
}

std::string twins_cell(const Rule& r) {
  std::string s;
  for (const Twin& t : r.twins) {
    if (!t.name) continue;
    if (!s.empty()) s += ", ";
    s += "`" + std::string(t.name) + "`";
    if (*t.note) s += " (" + std::string(t.note) + ")";
  }
  if (s.empty()) s = "none: " + std::string(r.no_twin_because);
  return s;
}

std::string section() {
  int checker = 0, emulator = 0, twins = 0, without = 0;
  for (const Rule& r : kRules) {
    (r.judge == Judge::kChecker ? checker : emulator) += 1;
    const int n = gemm::protocol::rules::twin_count(r);
    twins += n;
    without += n == 0;
  }
  std::ostringstream o;
  o << kBegin << "\n"
    << "<!-- Generated from common/protocol/rules.h by `protocol_rules --write docs/protocol_checker.md`: edit the "
       "header, not this table. -->\n"
    << gemm::protocol::rules::kRuleCount << " rules (" << checker << " found by the checker, " << emulator
    << " by the emulator; all reported as `protocol checker: <rule>: ...`), " << twins << " broken twins; " << without
    << " rules have none, each with the reason.\n\n"
    << "| rule | what it catches | PTX ISA (9.1) | stricter than the ISA | broken twin(s) | found by |\n"
    << "| --- | --- | --- | --- | --- | --- |\n";
  for (const Rule& r : kRules) {
    o << "| `" << r.id << "` | " << r.catches << " | " << r.ptx << " | " << r.stricter << " | " << twins_cell(r)
      << " | ";
    o << (r.judge == Judge::kChecker ? "checker" : "emulator") << " |\n";
  }
  o << kEnd << "\n";
  return o.str();
}

std::string json_string(const char* s) {
  std::string o = "\"";
  for (const char* p = s; *p; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += char(c);
    }
  }
  return o + "\"";
}

std::string json() {
  std::ostringstream o;
  o << "{\n  \"twin_files\": [";
  bool first = true;
  for (const char* f : gemm::protocol::rules::kTwinFiles) {
    o << (first ? "" : ", ") << json_string(f);
    first = false;
  }
  o << "],\n  \"rules\": [\n";
  for (int i = 0; i < gemm::protocol::rules::kRuleCount; ++i) {
    const Rule& r = kRules[i];
    o << "    {\"id\": " << json_string(r.id) << ", \"judge\": \""
      << (r.judge == Judge::kChecker ? "checker" : "emulator") << "\", \"ptx\": " << json_string(r.ptx) << ", \"no_twin_because\": " << json_string(r.no_twin_because)
      << ", \"twins\": [";
    bool first_twin = true;
    for (const Twin& t : r.twins) {
      if (!t.name) continue;
      o << (first_twin ? "" : ", ") << "{\"file\": " << json_string(t.file) << ", \"name\": " << json_string(t.name)
        << "}";
      first_twin = false;
    }
    o << "]}" << (i + 1 < gemm::protocol::rules::kRuleCount ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
  return o.str();
}

bool read_file(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  return true;
}

// DOC with its section replaced; false if DOC has not exactly one pair of markers, each on its own line.
bool replaced(const std::string& doc, const std::string& path, std::string& out) {
  const size_t b = doc.find(kBegin), e = doc.find(kEnd);
  const bool one_pair = b != std::string::npos && e != std::string::npos && b < e &&
                        doc.find(kBegin, b + 1) == std::string::npos && doc.find(kEnd, e + 1) == std::string::npos;
  const size_t after = e + std::strlen(kEnd);
  if (!one_pair || (b > 0 && doc[b - 1] != '\n') || after >= doc.size() || doc[after] != '\n') {
    std::fprintf(stderr, "protocol_rules: %s needs one '%s' line and one '%s' line after it\n", path.c_str(), kBegin,
                 kEnd);
    return false;
  }
  out = doc.substr(0, b) + section() + doc.substr(after + 1);
  return true;
}

int usage() {
  std::fprintf(stderr, "usage: protocol_rules [--write DOC | --check DOC | --json]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (!table_ok()) return 1;
  if (argc == 1) {
    std::cout << section();
    return 0;
  }
  const std::string mode = argv[1];
  if (mode == "--json" && argc == 2) {
    std::cout << json();
    return 0;
  }
  if ((mode != "--write" && mode != "--check") || argc != 3) return usage();
  const std::string path = argv[2];
  std::string doc, next;
  if (!read_file(path, doc)) {
    std::fprintf(stderr, "protocol_rules: cannot read %s\n", path.c_str());
    return 2;
  }
  if (!replaced(doc, path, next)) return 2;
  if (mode == "--check") {
    if (next == doc) return 0;
    std::fprintf(stderr,
                 "protocol_rules: the rules table of %s is not the one common/protocol/rules.h generates: edit the "
                 "header, then run protocol_rules --write %s\n",
                 path.c_str(), path.c_str());
    return 1;
  }
  if (next == doc) return 0;
  std::ofstream out(path, std::ios::binary);
  out << next;
  if (!out) {
    std::fprintf(stderr, "protocol_rules: cannot write %s\n", path.c_str());
    return 2;
  }
  return 0;
}
