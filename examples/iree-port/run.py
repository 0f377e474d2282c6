"""run.py - iree-port from Python: the installed package's runtime plugins
in this interpreter's iree.runtime (ireepkg.activate), then
tests/standalone_mul.mlir compiled and run: 3 * 5 through the FatELF."""
import pathlib

import iree.compiler
import iree.runtime as rt
import numpy as np

import ireepkg

ireepkg.activate()  # the default prefix; before the first device
program = pathlib.Path(__file__).parent / "tests" / "standalone_mul.mlir"
vmfb = iree.compiler.compile_file(
    str(program), target_backends=["llvm-cpu"],
    extra_args=["--iree-llvmcpu-target-cpu=host"])
module = rt.load_vm_flatbuffer(vmfb, driver="local-sync")
a = np.full(8, 3, np.float32)
b = np.full(8, 5, np.float32)
print(module.standalone_mul(a, b).to_host())
