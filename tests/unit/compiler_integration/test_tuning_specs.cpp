//===- test_tuning_specs.cpp - Tuning-spec targets and selection ---------===//
#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/compiler_integration/tuning_specs.h"

#include <doctest/doctest.h>

using namespace ireepkg;

TEST_CASE("tuning-spec targets") {
  CHECK(tuningTargetKind("gfx942") == TuningTargetKind::Rocm);
  CHECK(tuningTargetKind("gfx90a") == TuningTargetKind::Rocm);
  CHECK(tuningTargetKind("gfx1100") == TuningTargetKind::Rocm);
  CHECK(tuningTargetKind("llvm-cpu") == TuningTargetKind::AnyCpu);
  CHECK(tuningTargetKind("znver4") == TuningTargetKind::Cpu);
  CHECK(tuningTargetKind("x86-64-v3") == TuningTargetKind::Cpu);
  CHECK(tuningTargetKind("cuda") == TuningTargetKind::Ignoring);
  CHECK(tuningTargetKind("sm_80") == TuningTargetKind::Ignoring);
  CHECK(tuningTargetKind("vulkan-spirv") == TuningTargetKind::Ignoring);
  CHECK(tuningTargetKind("vmvx") == TuningTargetKind::Ignoring);
  CHECK(tuningTargetKind("rocm") == TuningTargetKind::Invalid);
  CHECK(tuningTargetKind("local") == TuningTargetKind::Invalid);
  CHECK(tuningTargetKind("GFX942") == TuningTargetKind::Invalid);
  CHECK(tuningTargetKind("") == TuningTargetKind::Invalid);
}

static std::vector<std::string> texts(const std::vector<CompileTarget> &ts) {
  std::vector<std::string> out;
  for (const CompileTarget &t : ts)
    out.push_back(t.text());
  return out;
}

TEST_CASE("the targets of a compile come from its own flags") {
  using V = std::vector<std::string>;
  CHECK(texts(compileTargetsOf({"m.mlir", "--iree-hal-target-device=hip",
                                "--iree-rocm-target=gfx942"})) == V{"gfx942"});
  CHECK(texts(compileTargetsOf({"--iree-hal-target-device=amdgpu[0]",
                                "--iree-hip-target=gfx1100"})) == V{"gfx1100"});
  CHECK(texts(compileTargetsOf({"--iree-hal-target-device=local",
                                "--iree-hal-local-target-device-backends="
                                "llvm-cpu",
                                "--iree-llvmcpu-target-cpu=host"})) ==
        V{"llvm-cpu"});
  CHECK(texts(compileTargetsOf({"--iree-hal-target-device=local",
                                "--iree-llvmcpu-target-cpu=znver4"})) ==
        V{"llvm-cpu (znver4)"});
  CHECK(texts(compileTargetsOf({"--iree-hal-target-backends=llvm-cpu,vmvx"})) ==
        V{"llvm-cpu", "vmvx"});
  CHECK(texts(compileTargetsOf({"--iree-hal-target-device", "cuda"})) ==
        V{"cuda"});
  CHECK(texts(compileTargetsOf({"--iree-hal-target-device=local",
                                "--iree-hal-local-target-device-backends="
                                "vmvx"})) == V{"vmvx"});
  CHECK(compileTargetsOf({"m.mlir", "-o", "m.vmfb"}).empty());
}

TEST_CASE("the threading workaround is recorded by IREE version") {
  CHECK(tuningSpecThreadingWorkaround("3.12.0").empty());
  CHECK(tuningSpecThreadingWorkaround("3.13.0").find("IREE 3.13.0 and later") !=
        std::string::npos);
  CHECK(tuningSpecThreadingWorkaround("4.0.0") != "");
  CHECK(tuningSpecThreadingWorkaround("").find("not known") !=
        std::string::npos);
}

TEST_CASE("specs are selected per target, in activation order") {
  auto manifest = [](std::map<std::string, std::string> targets,
                     std::string file = {}) {
    Manifest m;
    Hook h;
    h.point = HookPoint::TuningSpec;
    h.paths = std::move(targets);
    h.file = std::move(file);
    m.hooks.push_back(h);
    return m;
  };
  Manifest z = manifest({{"gfx942", "z/gfx942.mlir"},
                         {"llvm-cpu", "z/cpu.mlir"},
                         {"znver4", "z/znver4.mlir"}});
  Manifest a = manifest({}, "a/all.mlir");
  std::vector<ActivatedPackage> packages = {{"z", Version{}, "/p/z", &z},
                                            {"a", Version{}, "/p/a", &a}};
  auto rels = [&](std::vector<CompileTarget> targets, std::string chosen = {}) {
    std::vector<std::string> out;
    for (const TuningSpecInput &s :
         selectTuningSpecs(packages, targets, chosen, "3.13.0").specs)
      out.push_back(s.package + ":" + s.rel);
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(rels({{TuningTargetKind::Rocm, "gfx942"}}) ==
        V{"z:z/gfx942.mlir", "a:a/all.mlir"});
  CHECK(rels({{TuningTargetKind::Rocm, "gfx1100"}}) == V{"a:a/all.mlir"});
  CHECK(rels({{TuningTargetKind::Cpu, ""}}) ==
        V{"z:z/cpu.mlir", "a:a/all.mlir"});
  CHECK(rels({{TuningTargetKind::Cpu, "znver4"}}) ==
        V{"z:z/znver4.mlir", "a:a/all.mlir"});
  CHECK(rels({{TuningTargetKind::Cpu, "skylake"}}) ==
        V{"z:z/cpu.mlir", "a:a/all.mlir"});
  CHECK(rels({{TuningTargetKind::Rocm, "gfx942"}}, "a") == V{"a:a/all.mlir"});
  CHECK(rels({}) == V{"a:a/all.mlir"});
}
