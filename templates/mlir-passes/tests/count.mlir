// The test program of @NAME@: `ireepkg test` runs
//   mlir-opt --load-pass-plugin=<lib@IDENT@.so> \
//       --pass-pipeline='builtin.module(func.func(@NAME@-count-ops))'
// on it and expects the attribute the pass sets (ireeplugin.json, "tests").
func.func @two_ops(%a: i32) -> i32 {
  %b = arith.addi %a, %a : i32
  return %b : i32
}
