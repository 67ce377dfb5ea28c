#include "common/registry.h"

#include <algorithm>
#include <string>

namespace gemm {
namespace {
std::vector<const Stage*>& table() {
  static std::vector<const Stage*> stages;  // function-local: safe during static initialisation
  return stages;
}
}  // namespace

StageRegistrar::StageRegistrar(const Stage& stage) {
  auto& t = table();
  if (std::none_of(t.begin(), t.end(), [&](const Stage* s) { return std::string_view(s->id) == stage.id; }))
    t.push_back(&stage);
  std::sort(t.begin(), t.end(), [](const Stage* a, const Stage* b) { return std::string_view(a->id) < b->id; });
}

const Stage* find_stage(std::string_view id) {
  for (const Stage* s : table())
    if (id == s->id) return s;
  return nullptr;
}

std::vector<const Stage*> registered_stages() { return table(); }

}  // namespace gemm
