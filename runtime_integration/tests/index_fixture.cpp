//===- runtime_integration/tests/index_fixture.cpp ------------------------===//
//
// Writing runtime.index files for C tests.
//
// Converts the C fixture description of index_fixture.h into
// ireepkg::RuntimeIndexInput and writes what encodeRuntimeIndex returns.
//
//===----------------------------------------------------------------------===//
#include "index_fixture.h"

#include "ireepkg/runtime_integration/runtime_index.h"

#include <cstdio>

extern "C" int fixture_write_index(const char *file, const char *prefix,
                                   const char *platform,
                                   const fixture_plugin_t *plugins,
                                   size_t count) {
  ireepkg::RuntimeIndexInput input;
  input.prefix = prefix;
  input.platform = platform;
  for (size_t i = 0; i < count; ++i) {
    const fixture_plugin_t &p = plugins[i];
    ireepkg::RuntimeIndexPlugin out;
    out.name = p.name;
    out.package = p.package;
    out.packageVersion = p.version;
    out.format = p.format;
    for (size_t k = 0; k < p.library_count; ++k)
      out.libraries.emplace_back(p.libraries[k].key, p.libraries[k].value);
    for (size_t k = 0; k < p.import_count; ++k)
      out.imports.emplace_back(p.imports[k]);
    for (size_t k = 0; k < p.parameter_count; ++k)
      out.parameters.emplace_back(p.parameters[k].key, p.parameters[k].value);
    input.plugins.push_back(std::move(out));
  }
  std::string bytes = ireepkg::encodeRuntimeIndex(input);
  FILE *f = std::fopen(file, "wb");
  if (!f)
    return -1;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? 0 : -1;
}
