//===- TagPasses.h - The passes of the mlir-tag-passes package --*- C++ -*-===//
//
// Two small function passes whose effect is easy to see in the output of
// mlir-opt, so that tests can tell which packages' pipelines ran and in what
// order:
//
//   ireepkg-tag-functions{tag=<string>}
//       appends <string> (default "ireepkg") to the `ireepkg.tags` array
//       attribute of every func.func, creating the attribute if needed. Two
//       runs with tags "first" and "second" leave
//       `ireepkg.tags = ["first", "second"]`.
//
//   ireepkg-count-ops{dialect=<namespace>}
//       sets `ireepkg.op_count = <N> : i64` on every func.func, where N is the
//       number of operations nested in its body (all of them, or only those
//       of the given dialect namespace, e.g. `dialect=arith`).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_EXAMPLES_MLIR_PASSES_TAGPASSES_H
#define IREEPKG_EXAMPLES_MLIR_PASSES_TAGPASSES_H

namespace ireepkg::examples {

/// Attribute names the passes write.
inline constexpr const char *kTagsAttrName = "ireepkg.tags";
inline constexpr const char *kOpCountAttrName = "ireepkg.op_count";

/// Registers both passes with MLIR's global pass registry, unless a pass with
/// the same argument is already registered (a second copy of this library,
/// installed by another package, may be loaded into the same process).
void registerTagPasses();

} // namespace ireepkg::examples

#endif
