//===- ireepkg/pkg/prefix/shadowing.h - Shadowed imports --------*- C++ -*-===//
//
// IREE's runtime resolves an import in reverse registration order, and the
// prefix registers its runtime plugins in activation order: of several
// packages that declare the same import, the one activated last is used.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_SHADOWING_H
#define IREEPKG_PKG_SHADOWING_H

#include <string>
#include <vector>

namespace ireepkg {

/// An active runtime plugin: which package, which plugin.
struct RuntimePluginRef {
  std::string package;
  std::string plugin;
};

/// An import that the active runtime plugins of more than one package
/// declare. IREE resolves imports in reverse registration order, and the
/// prefix registers plugins in activation order, so the package activated
/// last provides it; the others are shadowed.
struct ShadowedImport {
  std::string import;
  RuntimePluginRef used;                  ///< the one IREE calls
  std::vector<RuntimePluginRef> shadowed; ///< the others, latest first
};

/// The shadowed imports of a prefix, from its state/activation.json (empty
/// when it has none). Within one package, the last of its plugins that
/// declares an import stands for the package (a package may ship the same
/// kernel as an embedded ELF and a system library).
std::vector<ShadowedImport> shadowedImports(const std::string &prefix);

} // namespace ireepkg

#endif // IREEPKG_PKG_SHADOWING_H
