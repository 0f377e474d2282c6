//===- cli/commands/cmd_signature.cpp - key generate, sign, verify --------===//
//
// The minisign-compatible signing commands: `ireepkg key generate` writes a
// key pair, `ireepkg sign` writes <file>.minisig beside each file, and
// `ireepkg signature verify` checks one. The work is in
// ireepkg/signature.h; this file reads options and reports.
//
//===----------------------------------------------------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"
#include "commands/shared.h"

#include "ireepkg/pkg/package/signature.h"

#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

namespace ireepkg::cli {

namespace {

using namespace ireepkg::signing;

std::string helpHint(const Command &self) {
  return "see `ireepkg " + self.name + " --help`";
}

/// A comment option must be one line that fits a minisign file; a bad one
/// is a usage error.
bool checkCommentOption(const Command &self, const char *option,
                        const std::string &text, size_t maxBytes) {
  if (text.find_first_of("\r\n") != std::string::npos) {
    printError(std::string("--") + option + " must be a single line",
               helpHint(self));
    return false;
  }
  if (text.size() > maxBytes) {
    printError(std::string("--") + option + " is " +
                   std::to_string(text.size()) + " bytes; at most " +
                   std::to_string(maxBytes) + " fit in a minisign file",
               helpHint(self));
    return false;
  }
  return true;
}

} // namespace

/// The password from --password-file, if given; false after printing an
/// error. Shared with the registry commands (cmd_registry.cpp).
bool passwordOption(const ParsedArgs &args, std::optional<std::string> &out) {
  auto file = args.value("password-file");
  if (!file)
    return true;
  auto password = readPasswordFile(*file);
  if (!password) {
    printError(password.error());
    return false;
  }
  out = std::move(*password);
  return true;
}

int runKeyGenerate(const Command &self, const ParsedArgs &args) {
  auto base = args.value("output");
  if (!base || base->empty()) {
    printError("'key generate' needs -o <base> (writes <base>.pub and "
               "<base>.key)",
               helpHint(self));
    return kExitUsage;
  }
  WriteKeyPairOptions options;
  options.comment = args.value("comment").value_or("");
  if (!checkCommentOption(self, "comment", options.comment,
                          kMaxUntrustedComment))
    return kExitUsage;
  options.force = args.flag("force");
  if (!passwordOption(args, options.password))
    return kExitFailure;

  KeyPair pair = generateKeyPair();
  auto paths = writeKeyPair(pair, *base, options);
  if (!paths) {
    printError(paths.error());
    return kExitFailure;
  }
  printSummary("wrote %s: public key %s (key id %s)\n",
               paths->publicKey.c_str(),
               publicKeyBase64(pair.publicKey).c_str(),
               keyIdHex(pair.publicKey).c_str());
  printSummary("wrote %s: secret key, %s\n", paths->secretKey.c_str(),
               options.password ? "encrypted with the password"
                                : "unencrypted (keep it secret)");
  return kExitOk;
}

int runSign(const Command &self, const ParsedArgs &args) {
  auto keyPath = args.value("key");
  if (!keyPath) {
    printError("'sign' needs --key <secret key>", helpHint(self));
    return kExitUsage;
  }
  auto trusted = args.value("trusted-comment");
  if (trusted && !checkCommentOption(self, "trusted-comment", *trusted,
                                     kMaxTrustedComment))
    return kExitUsage;

  auto keyFile = readSecretKeyFile(*keyPath);
  if (!keyFile) {
    printError(keyFile.error());
    return kExitFailure;
  }
  std::optional<std::string> password;
  if (!passwordOption(args, password))
    return kExitFailure;
  if (keyFile->encrypted && !password) {
    printError(*keyPath + ": the secret key is encrypted; its password is "
                          "needed",
               "give it with --password-file FILE");
    return kExitUsage;
  }
  if (!keyFile->encrypted && password)
    printWarning(*keyPath + " is not encrypted; ignoring --password-file");
  std::optional<std::string_view> passwordView;
  if (password && keyFile->encrypted)
    passwordView = *password;
  auto key = unlockSecretKey(*keyFile, passwordView);
  if (!key) {
    printError(key.error());
    return kExitFailure;
  }

  bool failed = false;
  for (const std::string &file : args.positional) {
    SignOptions options;
    options.trustedComment =
        trusted ? *trusted
                : defaultTrustedComment(
                      file, static_cast<int64_t>(std::time(nullptr)));
    auto sig = signFile(*key, file, options);
    const std::string sigPath = file + ".minisig";
    Status written = sig ? writeSignatureFile(*sig, sigPath)
                         : Status(Unexpected(sig.error()));
    if (!written) {
      printError(written.error());
      failed = true;
      continue;
    }
    printSummary("signed %s -> %s (key id %s)\n", file.c_str(), sigPath.c_str(),
                 keyIdHex(key->keyId).c_str());
  }
  return failed ? kExitFailure : kExitOk;
}

int runSignatureVerify(const Command &self, const ParsedArgs &args) {
  const std::string &file = args.positional[0];
  bool json = args.flag("json");
  auto keyText = args.value("public-key");
  if (!keyText) {
    printError("'signature verify' needs --public-key <key|file>",
               helpHint(self));
    return kExitUsage;
  }
  auto key = loadPublicKey(*keyText);
  if (!key)
    return printFailure(key.error(), json);
  const std::string sigPath =
      args.value("signature").value_or(file + ".minisig");
  auto verified = verifyFile(*key, file, sigPath);
  if (!verified)
    return printFailure(verified.error(), json);
  if (json) {
    std::printf("%s\n",
                nlohmann::json({{"ok", true},
                                {"file", file},
                                {"signature", sigPath},
                                {"key_id", keyIdHex(verified->keyId)},
                                {"prehashed", verified->prehashed},
                                {"trusted_comment", verified->trustedComment}})
                    .dump(2)
                    .c_str());
    return kExitOk;
  }
  printSummary("signature ok: %s (key id %s%s)\n", file.c_str(),
               keyIdHex(verified->keyId).c_str(),
               verified->prehashed ? "" : ", legacy format");
  printSummary("trusted comment: %s\n", verified->trustedComment.c_str());
  return kExitOk;
}

const Command &keyGenerateCommand() {
  static const Command command{
      .name = "key generate",
      .synopsis = "-o <base> [--password-file FILE] [--comment TEXT]",
      .summary = "make a minisign-compatible Ed25519 key pair for signing",
      .description =
          "Writes <base>.pub (the public key, for registry configs and "
          "project files) and <base>.key (the secret key, encrypted with a "
          "password as minisign does, or unencrypted when no password file "
          "is given). The files are interchangeable with minisign's.",
      .options =
          {{"output", 'o', "BASE", "write BASE.pub and BASE.key"},
           {"password-file", 0, "FILE",
            "read the secret key's password from FILE (default: no password)"},
           {"comment", 0, "TEXT", "the untrusted comment of the key files"},
           {"force", 0, "", "overwrite existing key files"}},
      .examples = {"ireepkg key generate -o registry-signing"},
      .maxPositional = 0,
      .run = runKeyGenerate,
  };
  return command;
}

const Command &signCommand() {
  static const Command command{
      .name = "sign",
      .synopsis = "<file>... --key <secret key> [--password-file FILE]",
      .summary = "sign files, writing <file>.minisig beside each",
      .description =
          "Signs each file with a minisign secret key (prehashed Ed25519, "
          "minisign's default), writing <file>.minisig that `minisign -V` "
          "accepts.",
      .options = {{"key", 'k', "FILE", "the minisign secret key file"},
                  {"password-file", 0, "FILE",
                   "read the key's password from FILE"},
                  {"trusted-comment", 't', "TEXT",
                   "the signed trusted comment (default: file name and time)"}},
      .examples = {"ireepkg sign snapshot.json --key registry-signing.key"},
      .minPositional = 1,
      .run = runSign,
  };
  return command;
}

const Command &signatureVerifyCommand() {
  static const Command command{
      .name = "signature verify",
      .synopsis = "<file> --public-key <key|file> [--signature FILE] [--json]",
      .summary = "check a file's minisign signature",
      .description =
          "Checks <file>.minisig (or --signature) against a public key given "
          "as its base64 text or as a .pub file: the signature, the key id, "
          "and the signature over the trusted comment. Works with "
          "signatures made by minisign -S.",
      .options = {{"public-key", 'p', "KEY", "the public key, or a .pub file"},
                  {"signature", 0, "FILE",
                   "the signature (default: <file>.minisig)"},
                  kJson},
      .examples = {"ireepkg signature verify snapshot.json -p RWQ..."},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runSignatureVerify,
  };
  return command;
}

} // namespace ireepkg::cli
