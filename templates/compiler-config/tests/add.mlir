// The test program of @NAME@: `ireepkg test` compiles it with iree-compile
// with the package activated (its preprocessing hook applied, as users get
// it) and runs @add with iree-run-module (ireeplugin.json, "tests").
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %sum = arith.addf %a, %b : tensor<4xf32>
  return %sum : tensor<4xf32>
}
