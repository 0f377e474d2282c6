//===- manifest_schema/src/platform_facts.cpp -----------------------------===//
// The facts of platform_facts.h, for C++.
#include "ireepkg/manifest_schema/platform_facts.h"

namespace ireepkg {

const ireepkg_platform_fact_t *platformFact(OS os, RuntimeFormat format) {
  std::string_view name = osName(os);
  return ireepkg_platform_fact_find(name.data(), name.size(),
                                    runtimeFormatName(format).data());
}

const ireepkg_platform_fact_t *stoppingPlatformFact(OS os,
                                                    RuntimeFormat format) {
  const ireepkg_platform_fact_t *fact = platformFact(os, format);
  return fact && !fact->fixed_in ? fact : nullptr;
}

std::string describePlatformFact(const ireepkg_platform_fact_t &fact) {
  std::string out = std::string("on ") + fact.os + ", " + fact.fact;
  if (fact.fixed_in)
    return out + " before IREE " + fact.fixed_in + " (" + fact.upstream + ")";
  return out + ": " + fact.cause + " (" + fact.upstream + "; " + fact.versions +
         ")";
}

} // namespace ireepkg
