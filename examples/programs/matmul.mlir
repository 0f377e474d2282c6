// An f32 matmul (128x256 times 256x64) for the matmul-tuning example's
// tuning specs: ireepkg exec -- iree-compile examples/programs/matmul.mlir
// --iree-hal-target-device=hip --iree-rocm-target=gfx942 (or for the CPU).
func.func @matmul(%lhs: tensor<128x256xf32>, %rhs: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x64xf32>) -> tensor<128x64xf32>
  %out = linalg.matmul ins(%lhs, %rhs : tensor<128x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %out : tensor<128x64xf32>
}
