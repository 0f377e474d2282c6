//===- pkg/src/checks/pipeline_report.cpp - What hook checks found --------===//
#include "ireepkg/pkg/checks/pipeline_report.h"
#include "ireepkg/base/text.h"

namespace ireepkg {

using nlohmann::json;

nlohmann::json toJson(const IreePipelineReport &report) {
  nlohmann::json pipelines = nlohmann::json::array();
  for (const IreePipelineCheck &p : report.pipelines) {
    nlohmann::json j = {{"point", std::string(hookPointName(p.point))},
                        {"status", p.status}};
    if (!p.pipeline.empty())
      j["pipeline"] = p.pipeline;
    if (!p.message.empty())
      j["message"] = p.message;
    if (!p.where.package.empty())
      j["package"] = p.where.package;
    if (!p.where.pointer.empty())
      j["pointer"] = p.where.pointer;
    pipelines.push_back(std::move(j));
  }
  nlohmann::json out = {{"ran", report.ran}, {"pipelines", pipelines}};
  if (report.ran)
    out["tool"] = report.tool;
  else
    out["skipped"] = report.skipped;
  return out;
}

nlohmann::json toJson(const MlirCheckReport &report) {
  json pipelines = json::array();
  for (const PipelineCheck &p : report.pipelines) {
    json j = {{"point", std::string(hookPointName(p.point))},
              {"status", p.status},
              {"unknown_passes", p.unknownPasses},
              {"errors", p.errors}};
    if (!p.where.package.empty())
      j["package"] = p.where.package;
    if (!p.where.file.empty())
      j["file"] = p.where.file;
    if (p.where.line)
      j["line"] = p.where.line;
    if (p.where.column)
      j["column"] = p.where.column;
    if (!p.where.pointer.empty())
      j["pointer"] = p.where.pointer;
    pipelines.push_back(std::move(j));
  }
  json plugins = json::array();
  for (const PassPluginLoad &p : report.plugins) {
    json j = {{"path", p.path},
              {"kind", p.dialect ? "mlir-dialect-plugin" : "mlir-pass-plugin"},
              {"loaded", p.loaded}};
    if (p.loaded) {
      j.update(
          {{"name", p.name}, {"version", p.version}, {"passes", p.passes}});
      if (p.dialect)
        j["dialects"] = p.dialects;
    } else
      j["error"] = p.error;
    plugins.push_back(std::move(j));
  }
  json out = {
      {"ran", report.ran}, {"pipelines", pipelines}, {"plugins", plugins}};
  if (!report.iree.pipelines.empty() || report.iree.ran)
    out["iree"] = toJson(report.iree);
  if (report.ran)
    out.update(
        {{"checker", report.checker}, {"mlir_version", report.mlirVersion}});
  else
    out["skipped"] = report.skipped;
  return out;
}

std::optional<std::string> ireePipelineErrorLine(std::string_view text) {
  bool ireeSaysSo = false;
  std::optional<std::string> first;
  for (std::string_view line : splitLines(text)) {
    bool ireeLine = startsWith(line, "ERROR: ") &&
                    line.find("pass pipeline") != std::string_view::npos;
    bool mlirLine = line.find(kMlirPipelineParser) != std::string_view::npos ||
                    startsWith(line, "<Pass-Options-Parser>:");
    ireeSaysSo |=
        ireeLine || line.find(kMlirPipelineParser) != std::string_view::npos;
    if ((ireeLine || mlirLine) && !first)
      first = trimmed(line, " \t\r");
  }
  if (!ireeSaysSo)
    return std::nullopt;
  return first;
}

} // namespace ireepkg
