// The test program of @NAME@: `ireepkg test` compiles it with iree-compile
// (with the test's compile_flags, the package's preprocessing pipeline) and
// runs @add with iree-run-module (ireeplugin.json, "tests").
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %sum = arith.addf %a, %b : tensor<4xf32>
  return %sum : tensor<4xf32>
}
