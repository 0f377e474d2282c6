//===- manifest_schema/src/json_document.cpp - JSON with source positions -===//
//
// See json_document.h for why this wraps nlohmann's SAX parser instead of
// calling json::parse.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/json_document.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace ireepkg {

using json = nlohmann::json;

std::string jsonPointerEscape(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

struct JsonDocument::Impl {
  json root;
  std::vector<uint32_t> lineStarts; // byte offset of each line's start
  std::unordered_map<std::string, uint32_t> valueOffsets;
  std::unordered_map<std::string, uint32_t> keyOffsets;
};

namespace {

/// Escapes control and non-ASCII bytes so that messages quoting bad input
/// stay printable (and valid UTF-8) whatever the input held.
std::string printable(std::string_view in) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : in) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// An input iterator over the text that publishes how many bytes the lexer
/// has pulled so far. nlohmann's lexer pulls at most one byte past the end of
/// a token (and only for numbers), so at every SAX event the published offset
/// is the end of the token just read, possibly plus that one byte.
class TrackingIterator {
public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  TrackingIterator() = default;
  TrackingIterator(const char *p, const char **published)
      : p_(p), published_(published) {}
  reference operator*() const { return *p_; }
  TrackingIterator &operator++() {
    ++p_;
    if (published_)
      *published_ = p_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackingIterator &o) const { return p_ == o.p_; }
  bool operator!=(const TrackingIterator &o) const { return p_ != o.p_; }

private:
  const char *p_ = nullptr;
  const char **published_ = nullptr;
};

class TreeBuilder : public nlohmann::json_sax<json> {
public:
  TreeBuilder(std::string_view text, const char **cursor,
              JsonDocument::Impl &impl, const JsonParseOptions &options,
              const JsonDocument &doc, DiagnosticList &diags)
      : text_(text), cursor_(cursor), impl_(impl), options_(options),
        doc_(doc), diags_(diags) {}

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override {
    return value(json(v));
  }
  bool number_float(number_float_t v, const string_t &) override {
    return value(json(v));
  }
  bool string(string_t &v) override { return value(json(std::move(v))); }
  bool binary(binary_t &) override { return false; }

  bool start_object(std::size_t) override {
    return open(json::object());
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }

  bool key(string_t &k) override {
    size_t start = tokenStart();
    Frame &top = frames_.back();
    std::string ptr = top.pointer + "/" + jsonPointerEscape(k);
    if (top.value->contains(k)) {
      Location where = doc_.locate("");
      where.pointer = ptr;
      doc_.lineColumn(start, where.line, where.column);
      auto firstIt = impl_.keyOffsets.find(ptr);
      std::string first;
      if (firstIt != impl_.keyOffsets.end()) {
        uint32_t l, c;
        doc_.lineColumn(firstIt->second, l, c);
        first = " (first defined at line " + std::to_string(l) + ":" +
                std::to_string(c) + ")";
      }
      diags_.error(where, "duplicate key \"" + k + "\"" + first,
                   "each key may appear once in an object; remove one");
    } else if (options_.trackLocations) {
      impl_.keyOffsets.emplace(ptr, static_cast<uint32_t>(start));
    }
    top.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: msg"
    size_t colon = what.find(": ");
    std::string msg =
        printable(colon == std::string::npos ? what : what.substr(colon + 2));
    // nlohmann's "last read" excerpt spans more than the bad token; the
    // position already says where the problem is.
    if (size_t lr = msg.find("; last read: '"); lr != std::string::npos) {
      size_t end = msg.find("'", lr + 14);
      size_t next = msg.find("; expected", end == std::string::npos ? lr : end);
      msg.erase(lr, next == std::string::npos ? std::string::npos : next - lr);
    }
    Location where = doc_.locate("");
    where.pointer.clear();
    size_t offset = position ? position - 1 : 0;
    if (offset > text_.size())
      offset = text_.size();
    doc_.lineColumn(offset, where.line, where.column);
    diags_.error(where, "invalid JSON: " + msg,
                 "fix the JSON syntax at this position");
    return false;
  }

  json takeRoot() { return std::move(root_); }

private:
  struct Frame {
    json *value;
    std::string pointer;
    std::string key;    // pending key (objects)
    size_t nextIndex = 0; // next element index (arrays)
  };

  /// Offset of the token that produced the current event: skip whitespace
  /// and separators after the end of the previous token.
  size_t tokenStart() {
    size_t consumed = static_cast<size_t>(*cursor_ - text_.data());
    size_t i = prevEnd_;
    while (i < text_.size() &&
           (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' ||
            text_[i] == '\r' || text_[i] == ',' || text_[i] == ':'))
      ++i;
    prevEnd_ = consumed;
    return i;
  }

  /// Places `v` in the tree; returns its slot and pointer.
  json *place(json v, std::string &ptr) {
    if (frames_.empty()) {
      root_ = std::move(v);
      ptr.clear();
      return &root_;
    }
    Frame &top = frames_.back();
    if (top.value->is_array()) {
      ptr = top.pointer + "/" + std::to_string(top.nextIndex++);
      top.value->push_back(std::move(v));
      return &top.value->back();
    }
    ptr = top.pointer + "/" + jsonPointerEscape(top.key);
    json &slot = (*top.value)[top.key];
    slot = std::move(v);
    return &slot;
  }

  bool value(json v) {
    size_t start = tokenStart();
    std::string ptr;
    place(std::move(v), ptr);
    if (options_.trackLocations)
      impl_.valueOffsets[ptr] = static_cast<uint32_t>(start);
    return true;
  }

  bool open(json v) {
    size_t start = tokenStart();
    if (frames_.size() >= options_.maxDepth) {
      Location where = doc_.locate("");
      where.pointer.clear();
      doc_.lineColumn(start, where.line, where.column);
      diags_.error(where,
                   "JSON nesting is deeper than " +
                       std::to_string(options_.maxDepth) + " levels",
                   "ireepkg files are shallow; this input is not one of them");
      return false;
    }
    std::string ptr;
    json *slot = place(std::move(v), ptr);
    if (options_.trackLocations)
      impl_.valueOffsets[ptr] = static_cast<uint32_t>(start);
    frames_.push_back(Frame{slot, ptr, {}, 0});
    return true;
  }

  bool close() {
    tokenStart();
    frames_.pop_back();
    return true;
  }

  std::string_view text_;
  const char **cursor_;
  JsonDocument::Impl &impl_;
  const JsonParseOptions &options_;
  const JsonDocument &doc_;
  DiagnosticList &diags_;
  json root_;
  std::vector<Frame> frames_;
  size_t prevEnd_ = 0;
};

} // namespace

JsonDocument::JsonDocument() : impl_(std::make_unique<Impl>()) {}
JsonDocument::JsonDocument(JsonDocument &&) noexcept = default;
JsonDocument &JsonDocument::operator=(JsonDocument &&) noexcept = default;
JsonDocument::~JsonDocument() = default;

const json &JsonDocument::root() const { return impl_->root; }

void JsonDocument::lineColumn(size_t offset, uint32_t &line,
                              uint32_t &column) const {
  const auto &starts = impl_->lineStarts;
  if (starts.empty()) {
    line = 1;
    column = static_cast<uint32_t>(offset + 1);
    return;
  }
  auto it = std::upper_bound(starts.begin(), starts.end(),
                             static_cast<uint32_t>(offset));
  size_t index = static_cast<size_t>(it - starts.begin()) - 1;
  line = static_cast<uint32_t>(index + 1);
  column = static_cast<uint32_t>(offset - starts[index] + 1);
}

std::optional<size_t>
JsonDocument::valueOffset(const std::string &pointer) const {
  auto it = impl_->valueOffsets.find(pointer);
  if (it == impl_->valueOffsets.end())
    return std::nullopt;
  return it->second;
}

std::optional<size_t>
JsonDocument::keyOffset(const std::string &pointer) const {
  auto it = impl_->keyOffsets.find(pointer);
  if (it == impl_->keyOffsets.end())
    return std::nullopt;
  return it->second;
}

Location JsonDocument::locate(const std::string &pointer) const {
  Location where;
  where.file = file_;
  where.pointer = pointer.empty() ? "/" : pointer;
  std::string p = pointer;
  while (true) {
    auto it = impl_->valueOffsets.find(p);
    if (it != impl_->valueOffsets.end()) {
      lineColumn(it->second, where.line, where.column);
      break;
    }
    if (p.empty())
      break;
    size_t slash = p.rfind('/');
    p = slash == std::string::npos ? std::string() : p.substr(0, slash);
  }
  return where;
}

Location JsonDocument::locateKey(const std::string &pointer) const {
  auto it = impl_->keyOffsets.find(pointer);
  if (it == impl_->keyOffsets.end())
    return locate(pointer);
  Location where;
  where.file = file_;
  where.pointer = pointer;
  lineColumn(it->second, where.line, where.column);
  return where;
}

Expected<JsonDocument> JsonDocument::parse(std::string_view text,
                                           std::string file,
                                           const JsonParseOptions &options) {
  JsonDocument doc;
  doc.file_ = std::move(file);
  if (text.size() > options.maxBytes)
    return makeError(ErrorCode::Parse,
                     "file is " + std::to_string(text.size()) +
                         " bytes, larger than the limit of " +
                         std::to_string(options.maxBytes) + " bytes",
                     Location::inFile(doc.file_),
                     "this is not an ireepkg file, or it is corrupted");
  auto &starts = doc.impl_->lineStarts;
  starts.push_back(0);
  for (const char *p = text.data(), *end = text.data() + text.size();
       (p = static_cast<const char *>(std::memchr(p, '\n', end - p)));)
    starts.push_back(static_cast<uint32_t>(++p - text.data()));

  DiagnosticList diags;
  const char *cursor = text.data();
  TreeBuilder builder(text, &cursor, *doc.impl_, options, doc, diags);
  TrackingIterator first(text.data(), &cursor);
  TrackingIterator last(text.data() + text.size(), nullptr);
  bool parsed = json::sax_parse(first, last, &builder,
                                json::input_format_t::json, /*strict=*/true);
  if (!parsed && !diags.hasErrors())
    diags.error(doc.locate(""), "invalid JSON");
  if (diags.hasErrors())
    return makeError(ErrorCode::Parse, diags);
  doc.impl_->root = builder.takeRoot();
  return doc;
}

std::string printableExcerpt(std::string_view in, size_t maxBytes) {
  bool cut = in.size() > maxBytes;
  std::string out = printable(cut ? in.substr(0, maxBytes) : in);
  return cut ? out + "..." : out;
}

Expected<json> parseJson(std::string_view text, const std::string &file,
                         const JsonParseOptions &options) {
  JsonParseOptions o = options;
  o.trackLocations = false;
  auto doc = JsonDocument::parse(text, file, o);
  if (!doc)
    return Unexpected(doc.error());
  return std::move(doc->impl_->root);
}

json parseJsonOrDiscarded(std::string_view text,
                          const JsonParseOptions &options) {
  auto parsed = parseJson(text, "", options);
  if (!parsed)
    return json(json::value_t::discarded);
  return std::move(*parsed);
}

Expected<JsonDocument> JsonDocument::load(const std::string &path,
                                          const JsonParseOptions &options) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::Io,
                     std::string("cannot open: ") + std::strerror(errno),
                     Location::inFile(path));
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0)
    return makeError(ErrorCode::Io, "cannot read (not a regular file?)",
                     Location::inFile(path));
  if (static_cast<size_t>(size) > options.maxBytes)
    return makeError(ErrorCode::Parse,
                     "file is " + std::to_string(size) +
                         " bytes, larger than the limit of " +
                         std::to_string(options.maxBytes) + " bytes",
                     Location::inFile(path),
                     "this is not an ireepkg file, or it is corrupted");
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size))
    return makeError(ErrorCode::Io, "read failed",
                     Location::inFile(path));
  return parse(text, path, options);
}

} // namespace ireepkg
