//===- DemoOps.td - The ireepkg_demo dialect and its op ----*- tablegen -*-===//
//
// A deliberately tiny dialect for the mlir-demo-dialect example package: one
// operation, `ireepkg_demo.marker`, that labels a point in a program and,
// optionally, the values live there:
//
//   ireepkg_demo.marker "after-add"
//   ireepkg_demo.marker "inputs" %a, %b : i32, i32
//
// The label must not be empty (the verifier says so).
//
//===----------------------------------------------------------------------===//

#ifndef IREEPKG_DEMO_OPS
#define IREEPKG_DEMO_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def IreepkgDemo_Dialect : Dialect {
  let name = "ireepkg_demo";
  let summary = "A demonstration dialect loaded with --load-dialect-plugin";
  let description = [{
    Shipped by the ireepkg example package `mlir-demo-dialect` to show how an
    MLIR dialect plugin is packaged, installed and activated.
  }];
  let cppNamespace = "::ireepkg::demo";
}

class IreepkgDemo_Op<string mnemonic, list<Trait> traits = []>
    : Op<IreepkgDemo_Dialect, mnemonic, traits>;

def IreepkgDemo_MarkerOp : IreepkgDemo_Op<"marker", [MemoryEffects<[MemWrite]>]> {
  let summary = "Labels a point in the program and the values live there";
  let description = [{
    Has no semantics beyond being kept: it is marked as writing memory so
    that cleanup passes leave it (and the values it names) in place.
  }];
  let arguments = (ins StrAttr:$label, Variadic<AnyType>:$values);
  let assemblyFormat = [{
    $label ($values^ `:` type($values))? attr-dict
  }];
  let hasVerifier = 1;
}

#endif // IREEPKG_DEMO_OPS
