//===- resolver.cpp - PubGrub dependency resolution -----------------------===//
//
// The solver follows the PubGrub description (pub's doc/solver.md): a
// partial solution of assignments (decisions and derivations), external and
// derived incompatibilities, unit propagation indexed by package, conflict
// resolution with the generalised resolution rule, backjumping and
// derivation-graph error reporting.
//
// Representation. Once a package's versions are loaded they are sorted once,
// and every term about the package carries a bit set over that list: the
// versions the term names. All solving (relations, intersections, unions,
// candidate counts) works on these bit sets, which are exact for the
// published versions and apply the pre-release rule of Constraint::matches.
// Terms also carry a VersionSet for explanations; external incompatibilities
// compute theirs only when a conflict needs them, derived ones when they are
// made.
//
// Bit sets know which versions exist, version sets do not: two ranges with
// no published version in common are disjoint for the bits but not for the
// text. Wherever the solver relies on that (a dependency no version
// satisfies, or a resolution step whose union of ranges covers every
// published version but not every version), it records the fact as an
// external "no versions of X match S" incompatibility in the derivation, so
// that every step of an explanation follows from the ranges it prints.
//
// Dependencies of adjacent versions with the same constraint text share one
// incompatibility whose range runs from the first such version (unbounded if
// it is the oldest) to just below the next version that differs (unbounded
// if none does), as pub does; unusable versions (yanked, wrong IREE, no
// build for a platform) are grouped the same way. A run of one version
// prints as that version.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/resolver.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ireepkg {

PackageSource::~PackageSource() = default;

namespace {

//===----------------------------------------------------------------------===//
// Bits: a set of version indices of one package
//===----------------------------------------------------------------------===//

/// A set of a package's versions: bit i is its i-th version in ascending
/// precedence. Binary operations take operands of the same package. Up to
/// 128 versions need no allocation.
class Bits {
public:
  Bits() = default;
  explicit Bits(uint32_t size) : size_(size) {
    if (words() > kInline)
      heap_ = std::make_unique<uint64_t[]>(words()); // zeroed
  }
  Bits(const Bits &other) : size_(other.size_) {
    std::copy(other.inline_, other.inline_ + kInline, inline_);
    if (other.heap_) {
      heap_ = std::make_unique_for_overwrite<uint64_t[]>(words());
      std::copy_n(other.heap_.get(), words(), heap_.get());
    }
  }
  Bits(Bits &&other) noexcept
      : size_(other.size_), heap_(std::move(other.heap_)) {
    std::copy(other.inline_, other.inline_ + kInline, inline_);
    other.size_ = 0;
  }
  Bits &operator=(const Bits &other) {
    if (this != &other)
      *this = Bits(other);
    return *this;
  }
  Bits &operator=(Bits &&other) noexcept {
    size_ = other.size_;
    heap_ = std::move(other.heap_);
    std::copy(other.inline_, other.inline_ + kInline, inline_);
    other.size_ = 0;
    return *this;
  }

  /// Versions lo..hi, both included.
  static Bits range(uint32_t size, uint32_t lo, uint32_t hi) {
    Bits out(size);
    for (uint32_t i = lo; i <= hi; ++i)
      out.set(i);
    return out;
  }
  static Bits all(uint32_t size) {
    return size ? range(size, 0, size - 1) : Bits(0);
  }

  bool test(uint32_t i) const { return (data()[i / 64] >> (i % 64)) & 1; }
  void set(uint32_t i) { data()[i / 64] |= uint64_t(1) << (i % 64); }

  bool none() const {
    const uint64_t *a = data();
    for (uint32_t w = 0, n = words(); w < n; ++w)
      if (a[w])
        return false;
    return true;
  }
  /// |this ∩ other|.
  uint32_t countAnd(const Bits &other) const {
    const uint64_t *a = data(), *b = other.data();
    uint32_t out = 0;
    for (uint32_t w = 0, n = words(); w < n; ++w)
      out += std::popcount(a[w] & b[w]);
    return out;
  }
  /// The highest index in the set, or -1.
  int32_t highest() const {
    const uint64_t *a = data();
    for (uint32_t w = words(); w-- > 0;)
      if (a[w])
        return int32_t(w * 64 + 63 - std::countl_zero(a[w]));
    return -1;
  }
  bool subsetOf(const Bits &other) const {
    const uint64_t *a = data(), *b = other.data();
    for (uint32_t w = 0, n = words(); w < n; ++w)
      if (a[w] & ~b[w])
        return false;
    return true;
  }
  bool intersects(const Bits &other) const {
    const uint64_t *a = data(), *b = other.data();
    for (uint32_t w = 0, n = words(); w < n; ++w)
      if (a[w] & b[w])
        return true;
    return false;
  }

  Bits operator&(const Bits &other) const {
    return combine(other, [](uint64_t a, uint64_t b) { return a & b; });
  }
  Bits operator|(const Bits &other) const {
    return combine(other, [](uint64_t a, uint64_t b) { return a | b; });
  }
  /// this \ other.
  Bits minus(const Bits &other) const {
    return combine(other, [](uint64_t a, uint64_t b) { return a & ~b; });
  }

private:
  static constexpr uint32_t kInline = 2;

  uint32_t words() const { return (size_ + 63) / 64; }
  uint64_t *data() { return heap_ ? heap_.get() : inline_; }
  const uint64_t *data() const { return heap_ ? heap_.get() : inline_; }

  template <typename Op> Bits combine(const Bits &other, Op op) const {
    Bits out(size_);
    const uint64_t *a = data(), *b = other.data();
    uint64_t *c = out.data();
    for (uint32_t w = 0, n = words(); w < n; ++w)
      c[w] = op(a[w], b[w]);
    return out;
  }

  uint32_t size_ = 0;
  uint64_t inline_[kInline] = {0, 0};
  std::unique_ptr<uint64_t[]> heap_;
};

//===----------------------------------------------------------------------===//
// Terms
//===----------------------------------------------------------------------===//

/// "pkg is selected at one of bits" (positive) or "pkg is not selected at
/// any of bits" (negative; true as well when pkg is not selected at all).
struct Term {
  uint32_t pkg = 0;
  bool positive = true;
  Bits bits;
  /// The same versions as a range, for explanations.
  VersionSet set;
};

enum class Relation : uint8_t { Satisfied, Contradicted, Inconclusive };

/// How what is known about a package (`known`: an accumulated term, or
/// nothing) relates to the term (tPositive, t).
Relation relate(bool known, bool aPositive, const Bits &a, bool tPositive,
                const Bits &t) {
  if (!known) {
    // Anything may still happen; only terms about no version are decided.
    if (t.none())
      return tPositive ? Relation::Contradicted : Relation::Satisfied;
    return Relation::Inconclusive;
  }
  if (aPositive) {
    if (tPositive) {
      if (a.subsetOf(t))
        return Relation::Satisfied;
      return a.intersects(t) ? Relation::Inconclusive
                             : Relation::Contradicted;
    }
    if (!a.intersects(t))
      return Relation::Satisfied;
    return a.subsetOf(t) ? Relation::Contradicted : Relation::Inconclusive;
  }
  // `a` allows "not selected", which a positive term never does and a
  // negative term always does.
  if (tPositive)
    return t.subsetOf(a) ? Relation::Contradicted : Relation::Inconclusive;
  return t.subsetOf(a) ? Relation::Satisfied : Relation::Inconclusive;
}

/// a := a ∩ t, on bits.
void intersectBits(bool &aPositive, Bits &a, bool tPositive, const Bits &t) {
  if (aPositive && tPositive)
    a = a & t;
  else if (aPositive)
    a = a.minus(t);
  else if (tPositive) {
    a = t.minus(a);
    aPositive = true;
  } else
    a = a | t;
}

/// a := a ∩ t, on version sets.
void intersectSets(bool aPositive, VersionSet &a, bool tPositive,
                   const VersionSet &t) {
  if (aPositive && tPositive)
    a = a.intersect(t);
  else if (aPositive)
    a = a.difference(t);
  else if (tPositive)
    a = t.difference(a);
  else
    a = a.unionWith(t);
}

/// a ∩ b, both about the same package.
Term intersectTerms(const Term &a, const Term &b) {
  Term out = a;
  intersectSets(a.positive, out.set, b.positive, b.set);
  intersectBits(out.positive, out.bits, b.positive, b.bits);
  return out;
}

/// a ∪ b, both about the same package.
Term unionTerms(const Term &a, const Term &b) {
  Term out;
  out.pkg = a.pkg;
  if (a.positive && b.positive) {
    out.positive = true;
    out.bits = a.bits | b.bits;
    out.set = a.set.unionWith(b.set);
  } else if (a.positive) {
    out.positive = false;
    out.bits = b.bits.minus(a.bits);
    out.set = b.set.difference(a.set);
  } else if (b.positive) {
    out.positive = false;
    out.bits = a.bits.minus(b.bits);
    out.set = a.set.difference(b.set);
  } else {
    out.positive = false;
    out.bits = a.bits & b.bits;
    out.set = a.set.intersect(b.set);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Incompatibilities, assignments, packages
//===----------------------------------------------------------------------===//

enum class Kind : uint8_t {
  Dependency,  ///< pkg's versions lo..hi depend on dep `constraint`
  NoVersions,  ///< no version of pkg is in `range`
  NotFound,    ///< pkg does not exist
  Yanked,      ///< pkg's versions lo..hi are yanked
  Iree,        ///< pkg's versions lo..hi require another IREE
  NoBuild,     ///< pkg's versions lo..hi lack a build for `platform`
  Derived,     ///< follows from cause1 and cause2
};

struct Incompat {
  Kind kind = Kind::Derived;
  /// At most one term per package.
  std::vector<Term> terms;
  /// Whether every term's `set` is filled in.
  bool setsReady = false;

  uint32_t pkg = 0;
  uint32_t lo = 0, hi = 0;
  uint32_t dep = 0;
  const Constraint *constraint = nullptr; ///< Dependency, Iree
  uint32_t platform = 0;                  ///< NoBuild: request index
  VersionSet range;                       ///< NoVersions
  int32_t cause1 = -1, cause2 = -1;       ///< Derived
};

struct Assignment {
  uint32_t pkg = 0;
  /// The assignment's own term.
  bool positive = true;
  Bits bits;
  /// Everything known about pkg up to and including this assignment.
  bool accPositive = true;
  Bits acc;
  uint32_t level = 0;
  int32_t cause = -1; ///< the incompatibility it follows from; -1: decision
  int32_t prev = -1;  ///< the previous assignment about pkg
};

/// Why a version may not be chosen.
enum class Unusable : uint8_t { None, Iree, NoBuild, Yanked };

constexpr int32_t kUnset = -1; ///< dependency not yet turned into a fact
constexpr int32_t kVacuous = -2; ///< dependency that forbids nothing

struct VersionInfo {
  /// The version's dependencies by name, pointing into its map.
  std::vector<std::pair<const std::string *, const Constraint *>> deps;
  /// For each dependency, its incompatibility, kUnset or kVacuous.
  std::vector<int32_t> depIncompat;
  Unusable unusable = Unusable::None;
  uint32_t platform = 0; ///< NoBuild: the first missing platform
  int32_t unusableIncompat = -1;
};

struct Package {
  std::string name;
  bool loaded = false;
  bool exists = true;
  uint32_t size = 0; ///< number of versions
  std::vector<CandidateVersion> versions; ///< ascending precedence
  std::vector<VersionInfo> info;
  Bits usable;
  int32_t preferred = -1;
  /// Constraint text -> the versions it matches.
  std::unordered_map<std::string, Bits> matchCache;
  /// Every registered incompatibility with a term about this package.
  std::vector<uint32_t> incompats;
  int32_t last = -1;     ///< the latest assignment about it, or -1
  int32_t decision = -1; ///< the decided version, or -1
  bool queued = false;
};

std::string joinList(const std::vector<std::string> &items,
                     const char *last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += i + 1 == items.size() ? last : ", ";
    out += items[i];
  }
  return out;
}

/// The exclusive upper bound that stops just below v and prints as "<v".
Version justBelow(const Version &v) {
  Version out;
  out.major = v.major;
  out.minor = v.minor;
  out.patch = v.patch;
  out.prerelease = v.isPrerelease() ? v.prerelease
                                    : std::vector<std::string>{"0"};
  return out;
}

//===----------------------------------------------------------------------===//
// The solver
//===----------------------------------------------------------------------===//

class Solver {
public:
  Solver(const ResolveRequest &request, PackageSource &source)
      : request_(request), source_(source) {}

  Expected<Resolution> run();

private:
  // Packages.
  uint32_t intern(const std::string &name);
  Status load(uint32_t id);
  const Bits &matching(uint32_t id, const Constraint &c);
  VersionSet runSet(uint32_t id, uint32_t lo, uint32_t hi) const;

  // Incompatibilities.
  uint32_t add(Incompat incompat);
  uint32_t registerIncompat(uint32_t id);
  uint32_t addDerived(std::vector<Term> terms, uint32_t cause1,
                      uint32_t cause2);
  uint32_t addNoVersions(uint32_t pkg, VersionSet range);
  Expected<int32_t> addDependency(uint32_t pkg, uint32_t lo, uint32_t hi,
                                  uint32_t dep, const Constraint &c);
  uint32_t unusableIncompat(uint32_t pkg, uint32_t v);
  void ensureSets(uint32_t id);
  bool isTerminal(const Incompat &incompat) const;

  // Partial solution.
  Relation relation(const Term &t) const;
  void addAssignment(uint32_t pkg, bool positive, Bits bits, int32_t cause);
  void backtrack(uint32_t level);
  void enqueue(uint32_t pkg);
  void pushCandidate(uint32_t pkg);
  std::optional<uint32_t> pick();
  int32_t earliestSatisfier(const Term &t) const;

  // The algorithm.
  bool propagate();
  std::optional<uint32_t> resolveConflict(uint32_t id);
  uint32_t priorCause(uint32_t id, uint32_t cause, uint32_t pkg);
  Status decide(uint32_t pkg);
  bool wouldConflict(uint32_t id, uint32_t pkg, uint32_t v) const;
  Resolution solution() const;

  // Explanations.
  std::string explain(uint32_t terminal);
  std::string describe(uint32_t id) const;
  std::string termText(const Term &t) const;
  std::string rangeText(uint32_t pkg, uint32_t lo, uint32_t hi,
                        bool everyVersion) const;

  const ResolveRequest &request_;
  PackageSource &source_;
  std::deque<Package> packages_; ///< [0] is the root
  std::unordered_map<std::string, uint32_t> ids_;
  std::deque<Incompat> incompats_;
  std::vector<Assignment> assignments_;
  uint32_t level_ = 0;
  std::deque<uint32_t> queue_;
  /// (remaining candidates, package): packages to decide, lazily updated.
  std::priority_queue<std::pair<uint32_t, uint32_t>,
                      std::vector<std::pair<uint32_t, uint32_t>>,
                      std::greater<>>
      candidates_;
  uint32_t terminal_ = 0;
};

uint32_t Solver::intern(const std::string &name) {
  auto [it, inserted] = ids_.try_emplace(name, uint32_t(packages_.size()));
  if (inserted)
    packages_.emplace_back().name = name;
  return it->second;
}

Status Solver::load(uint32_t id) {
  Package &p = packages_[id];
  if (p.loaded)
    return ok();
  p.loaded = true;
  Expected<std::vector<CandidateVersion>> got = source_.versions(p.name);
  if (!got) {
    if (got.error().code != ErrorCode::NotFound)
      return Unexpected(got.error());
    p.exists = false;
    return ok();
  }

  // Ascending precedence; among versions of equal precedence (which differ
  // in build metadata only) keep one, chosen independently of the order.
  std::vector<CandidateVersion> vs = std::move(*got);
  auto buildText = [](const Version &v) {
    std::string out;
    for (const std::string &id : v.build)
      out += id + ".";
    return out;
  };
  std::stable_sort(vs.begin(), vs.end(),
                   [&](const CandidateVersion &a, const CandidateVersion &b) {
                     if (int c = compare(a.version, b.version))
                       return c < 0;
                     return buildText(a.version) < buildText(b.version);
                   });
  vs.erase(std::unique(vs.begin(), vs.end(),
                       [](const CandidateVersion &a,
                          const CandidateVersion &b) {
                         return a.version == b.version;
                       }),
           vs.end());
  p.versions = std::move(vs);
  p.size = uint32_t(p.versions.size());
  p.info.resize(p.size);
  p.usable = Bits(p.size);

  bool locked = !request_.upgradeAll && !request_.upgrade.count(p.name);
  if (auto it = request_.preferred.find(p.name);
      locked && it != request_.preferred.end())
    for (uint32_t i = 0; i < p.size; ++i)
      if (p.versions[i].version == it->second)
        p.preferred = int32_t(i);

  for (uint32_t i = 0; i < p.size; ++i) {
    const CandidateVersion &cv = p.versions[i];
    VersionInfo &info = p.info[i];
    for (const auto &[name, constraint] : cv.dependencies)
      info.deps.emplace_back(&name, &constraint);
    info.depIncompat.assign(info.deps.size(), kUnset);

    if (cv.requiresIree && request_.ireeVersion &&
        !cv.requiresIree->set().contains(*request_.ireeVersion)) {
      info.unusable = Unusable::Iree;
    } else if (!cv.platforms.empty()) {
      for (uint32_t k = 0; k < request_.platforms.size(); ++k)
        if (std::find(cv.platforms.begin(), cv.platforms.end(),
                      request_.platforms[k]) == cv.platforms.end()) {
          info.unusable = Unusable::NoBuild;
          info.platform = k;
          break;
        }
    }
    if (info.unusable == Unusable::None && cv.yanked &&
        p.preferred != int32_t(i))
      info.unusable = Unusable::Yanked;
    if (info.unusable == Unusable::None)
      p.usable.set(i);
  }
  return ok();
}

const Bits &Solver::matching(uint32_t id, const Constraint &c) {
  Package &p = packages_[id];
  auto [it, inserted] = p.matchCache.try_emplace(c.text(), p.size);
  if (inserted)
    for (uint32_t i = 0; i < p.size; ++i)
      if (c.matches(p.versions[i].version))
        it->second.set(i);
  return it->second;
}

/// Versions lo..hi as a range: one version prints as itself; otherwise from
/// the first (unbounded if the oldest) to just below the next version
/// (unbounded if hi is the newest).
VersionSet Solver::runSet(uint32_t id, uint32_t lo, uint32_t hi) const {
  const Package &p = packages_[id];
  if (id == 0)
    return VersionSet::any();
  if (lo == hi)
    return VersionSet::exactly(p.versions[lo].version);
  VersionSet out = VersionSet::any();
  if (lo > 0)
    out = VersionSet::atLeast(p.versions[lo].version);
  if (hi + 1 < p.size)
    out = out.intersect(
        VersionSet::lessThan(justBelow(p.versions[hi + 1].version)));
  return out;
}

uint32_t Solver::add(Incompat incompat) {
  incompats_.push_back(std::move(incompat));
  return uint32_t(incompats_.size() - 1);
}

uint32_t Solver::registerIncompat(uint32_t id) {
  for (const Term &t : incompats_[id].terms)
    packages_[t.pkg].incompats.push_back(id);
  return id;
}

uint32_t Solver::addDerived(std::vector<Term> terms, uint32_t cause1,
                            uint32_t cause2) {
  Incompat out;
  out.kind = Kind::Derived;
  out.terms = std::move(terms);
  out.setsReady = true;
  out.cause1 = int32_t(cause1);
  out.cause2 = int32_t(cause2);
  return add(std::move(out));
}

uint32_t Solver::addNoVersions(uint32_t pkg, VersionSet range) {
  Incompat out;
  out.kind = Kind::NoVersions;
  out.pkg = pkg;
  out.terms.push_back(Term{pkg, true, Bits(packages_[pkg].size), range});
  out.range = std::move(range);
  out.setsReady = true;
  return add(std::move(out));
}

/// Turns "pkg's versions lo..hi depend on dep c" into the incompatibility
/// the solver uses and registers it. Returns its id, or kVacuous when it
/// forbids nothing (a self-dependency every version in the run meets).
Expected<int32_t> Solver::addDependency(uint32_t pkg, uint32_t lo, uint32_t hi,
                                        uint32_t dep, const Constraint &c) {
  if (Status s = load(dep); !s)
    return Unexpected(s.error());
  Bits wanted = matching(dep, c);
  Bits run = Bits::range(packages_[pkg].size, lo, hi);

  Incompat fact;
  fact.kind = Kind::Dependency;
  fact.pkg = pkg;
  fact.lo = lo;
  fact.hi = hi;
  fact.dep = dep;
  fact.constraint = &c;
  if (pkg == dep) {
    Bits left = run.minus(wanted);
    if (left.none())
      return kVacuous;
    fact.terms.push_back(Term{pkg, true, std::move(left), {}});
    return int32_t(registerIncompat(add(std::move(fact))));
  }
  bool satisfiable = !wanted.none();
  fact.terms.push_back(Term{pkg, true, run, {}});
  fact.terms.push_back(Term{dep, false, std::move(wanted), {}});
  if (satisfiable)
    return int32_t(registerIncompat(add(std::move(fact))));

  // No published version of dep meets c: with that fact, the run itself is
  // forbidden.
  uint32_t factId = add(std::move(fact));
  uint32_t none;
  if (packages_[dep].exists) {
    none = addNoVersions(dep, c.set());
  } else {
    Incompat missing;
    missing.kind = Kind::NotFound;
    missing.pkg = dep;
    missing.terms.push_back(Term{dep, true, Bits(0), VersionSet::any()});
    missing.setsReady = true;
    none = add(std::move(missing));
  }
  std::vector<Term> terms;
  terms.push_back(Term{pkg, true, std::move(run), runSet(pkg, lo, hi)});
  return int32_t(registerIncompat(addDerived(std::move(terms), factId, none)));
}

/// The incompatibility that forbids unusable version v of pkg and the
/// adjacent versions unusable for the same reason; registered on first use.
uint32_t Solver::unusableIncompat(uint32_t pkg, uint32_t v) {
  Package &p = packages_[pkg];
  if (p.info[v].unusableIncompat >= 0)
    return uint32_t(p.info[v].unusableIncompat);
  auto same = [&](uint32_t i) {
    const VersionInfo &a = p.info[i], &b = p.info[v];
    if (a.unusable != b.unusable)
      return false;
    if (a.unusable == Unusable::NoBuild)
      return a.platform == b.platform;
    if (a.unusable == Unusable::Iree)
      return p.versions[i].requiresIree->text() ==
             p.versions[v].requiresIree->text();
    return true;
  };
  uint32_t lo = v, hi = v;
  while (lo > 0 && same(lo - 1))
    --lo;
  while (hi + 1 < p.size && same(hi + 1))
    ++hi;

  Incompat out;
  out.pkg = pkg;
  out.lo = lo;
  out.hi = hi;
  switch (p.info[v].unusable) {
  case Unusable::Iree:
    out.kind = Kind::Iree;
    out.constraint = &*p.versions[v].requiresIree;
    break;
  case Unusable::NoBuild:
    out.kind = Kind::NoBuild;
    out.platform = p.info[v].platform;
    break;
  default:
    out.kind = Kind::Yanked;
    break;
  }
  out.terms.push_back(Term{pkg, true, Bits::range(p.size, lo, hi), {}});
  uint32_t id = registerIncompat(add(std::move(out)));
  for (uint32_t i = lo; i <= hi; ++i)
    p.info[i].unusableIncompat = int32_t(id);
  return id;
}

void Solver::ensureSets(uint32_t id) {
  Incompat &in = incompats_[id];
  if (in.setsReady)
    return;
  in.setsReady = true;
  VersionSet run = runSet(in.pkg, in.lo, in.hi);
  if (in.kind != Kind::Dependency) {
    in.terms[0].set = std::move(run);
    return;
  }
  if (in.terms.size() == 1) { // a self-dependency
    in.terms[0].set = run.difference(in.constraint->set());
    return;
  }
  in.terms[0].set = std::move(run);
  in.terms[1].set = in.constraint->set();
}

bool Solver::isTerminal(const Incompat &in) const {
  return in.terms.empty() ||
         (in.terms.size() == 1 && in.terms[0].pkg == 0 &&
          in.terms[0].positive);
}

//===----------------------------------------------------------------------===//
// Partial solution
//===----------------------------------------------------------------------===//

Relation Solver::relation(const Term &t) const {
  int32_t last = packages_[t.pkg].last;
  if (last < 0)
    return relate(false, true, t.bits, t.positive, t.bits);
  const Assignment &a = assignments_[size_t(last)];
  return relate(true, a.accPositive, a.acc, t.positive, t.bits);
}

void Solver::addAssignment(uint32_t pkg, bool positive, Bits bits,
                           int32_t cause) {
  Package &p = packages_[pkg];
  Assignment a;
  a.pkg = pkg;
  a.positive = positive;
  a.accPositive = positive;
  a.acc = bits;
  if (p.last >= 0) {
    const Assignment &prev = assignments_[size_t(p.last)];
    a.accPositive = prev.accPositive;
    a.acc = prev.acc;
    intersectBits(a.accPositive, a.acc, positive, bits);
  }
  a.bits = std::move(bits);
  if (cause < 0) {
    ++level_;
    p.decision = a.acc.highest();
  }
  a.level = level_;
  a.cause = cause;
  a.prev = p.last;
  p.last = int32_t(assignments_.size());
  assignments_.push_back(std::move(a));
  enqueue(pkg);
  pushCandidate(pkg);
}

void Solver::backtrack(uint32_t level) {
  std::vector<uint32_t> touched;
  while (assignments_.back().level > level) {
    const Assignment &a = assignments_.back();
    Package &p = packages_[a.pkg];
    p.last = a.prev;
    if (a.cause < 0)
      p.decision = -1;
    touched.push_back(a.pkg);
    assignments_.pop_back();
  }
  level_ = level;
  for (uint32_t pkg : touched)
    pushCandidate(pkg);
}

void Solver::enqueue(uint32_t pkg) {
  Package &p = packages_[pkg];
  if (!p.queued) {
    p.queued = true;
    queue_.push_back(pkg);
  }
}

/// Records pkg as a package to decide if it is one: selected (a positive
/// term), not decided, not the root.
void Solver::pushCandidate(uint32_t pkg) {
  const Package &p = packages_[pkg];
  if (pkg == 0 || p.decision >= 0 || p.last < 0)
    return;
  const Assignment &a = assignments_[size_t(p.last)];
  if (a.accPositive)
    candidates_.emplace(a.acc.countAnd(p.usable), pkg);
}

/// The package to decide next: fewest usable candidates left, then first
/// seen.
std::optional<uint32_t> Solver::pick() {
  while (!candidates_.empty()) {
    auto [count, pkg] = candidates_.top();
    const Package &p = packages_[pkg];
    if (p.decision < 0 && p.last >= 0) {
      const Assignment &a = assignments_[size_t(p.last)];
      if (a.accPositive && a.acc.countAnd(p.usable) == count)
        return pkg;
    }
    candidates_.pop();
  }
  return std::nullopt;
}

/// The earliest assignment after which t is satisfied; t must be.
int32_t Solver::earliestSatisfier(const Term &t) const {
  int32_t found = -1;
  for (int32_t i = packages_[t.pkg].last; i >= 0;
       i = assignments_[size_t(i)].prev) {
    const Assignment &a = assignments_[size_t(i)];
    if (relate(true, a.accPositive, a.acc, t.positive, t.bits) !=
        Relation::Satisfied)
      break;
    found = i;
  }
  return found;
}

//===----------------------------------------------------------------------===//
// Unit propagation, conflict resolution, decision making
//===----------------------------------------------------------------------===//

/// Unit propagation over the queued packages. False when version solving
/// failed (terminal_ is then the root cause).
bool Solver::propagate() {
  while (!queue_.empty()) {
    uint32_t pkg = queue_.front();
    queue_.pop_front();
    packages_[pkg].queued = false;
    // Newest first: learned incompatibilities are the most general.
    for (size_t k = packages_[pkg].incompats.size(); k-- > 0;) {
      uint32_t id = packages_[pkg].incompats[k];
      const Incompat &in = incompats_[id];
      int32_t open = -1;
      bool skip = false;
      for (size_t i = 0; i < in.terms.size() && !skip; ++i) {
        switch (relation(in.terms[i])) {
        case Relation::Satisfied:
          break;
        case Relation::Contradicted:
          skip = true;
          break;
        case Relation::Inconclusive:
          if (open >= 0)
            skip = true;
          open = int32_t(i);
          break;
        }
      }
      if (skip)
        continue;
      if (open >= 0) {
        const Term &t = in.terms[size_t(open)];
        addAssignment(t.pkg, !t.positive, t.bits, int32_t(id));
        continue;
      }

      // A conflict: learn its root cause, backjump, and go on from there.
      std::optional<uint32_t> learned = resolveConflict(id);
      if (!learned)
        return false;
      for (uint32_t q : queue_)
        packages_[q].queued = false;
      queue_.clear();
      const Incompat &l = incompats_[*learned];
      open = -1;
      for (size_t i = 0; i < l.terms.size(); ++i)
        if (relation(l.terms[i]) == Relation::Inconclusive)
          open = int32_t(i);
      if (open >= 0) {
        const Term &t = l.terms[size_t(open)];
        addAssignment(t.pkg, !t.positive, t.bits, int32_t(*learned));
      } else {
        for (const Term &t : l.terms)
          enqueue(t.pkg);
      }
      break;
    }
  }
  return true;
}

/// Conflict resolution for an incompatibility the partial solution
/// satisfies. Returns the learned incompatibility after backjumping, or
/// nullopt when version solving failed (terminal_ set).
std::optional<uint32_t> Solver::resolveConflict(uint32_t id) {
  uint32_t current = id;
  std::vector<int32_t> earliest;
  for (;;) {
    const Incompat &in = incompats_[current];
    if (isTerminal(in)) {
      terminal_ = current;
      return std::nullopt;
    }
    earliest.assign(in.terms.size(), -1);
    int32_t satisfier = -1;
    size_t satisfied = 0;
    for (size_t i = 0; i < in.terms.size(); ++i) {
      earliest[i] = earliestSatisfier(in.terms[i]);
      if (earliest[i] > satisfier) {
        satisfier = earliest[i];
        satisfied = i;
      }
    }
    const Assignment &s = assignments_[size_t(satisfier)];
    const Term &term = in.terms[satisfied];

    // The previous satisfier: the latest assignment, before the satisfier,
    // that the other terms or (with the satisfier) this term still need.
    int32_t previous = -1;
    for (size_t i = 0; i < in.terms.size(); ++i)
      if (i != satisfied)
        previous = std::max(previous, earliest[i]);
    if (relate(true, s.positive, s.bits, term.positive, term.bits) !=
        Relation::Satisfied) {
      int32_t needed = -1;
      for (int32_t j = s.prev; j >= 0; j = assignments_[size_t(j)].prev) {
        const Assignment &a = assignments_[size_t(j)];
        bool pos = a.accPositive;
        Bits acc = a.acc;
        intersectBits(pos, acc, s.positive, s.bits);
        if (relate(true, pos, acc, term.positive, term.bits) !=
            Relation::Satisfied)
          break;
        needed = j;
      }
      previous = std::max(previous, needed);
    }
    uint32_t previousLevel =
        previous >= 0 ? assignments_[size_t(previous)].level : 0;

    if (s.cause < 0 || previousLevel != s.level) {
      if (current != id)
        registerIncompat(current);
      backtrack(previousLevel);
      return current;
    }
    current = priorCause(current, uint32_t(s.cause), s.pkg);
  }
}

/// The resolvent of `id` and `cause` on package `pkg`: {q, r, t1 ∪ t2} for
/// {t1, q} and {t2, r}, without the pkg term when it allows everything.
uint32_t Solver::priorCause(uint32_t id, uint32_t cause, uint32_t pkg) {
  ensureSets(id);
  ensureSets(cause);
  std::vector<Term> terms;
  const Term *mine = nullptr, *theirs = nullptr;
  auto merge = [&](const Term &t) {
    for (Term &e : terms)
      if (e.pkg == t.pkg) {
        e = intersectTerms(e, t);
        return;
      }
    terms.push_back(t);
  };
  for (const Term &t : incompats_[id].terms)
    if (t.pkg == pkg)
      mine = &t;
    else
      merge(t);
  for (const Term &t : incompats_[cause].terms)
    if (t.pkg == pkg)
      theirs = &t;
    else
      merge(t);

  Term both = unionTerms(*mine, *theirs);
  if (both.positive || !both.bits.none()) {
    terms.push_back(std::move(both));
    return addDerived(std::move(terms), id, cause);
  }
  if (both.set.isEmpty())
    return addDerived(std::move(terms), id, cause);
  // Together the two terms cover every published version but not every
  // version: say what the missing range lacks.
  VersionSet gap = both.set;
  std::vector<Term> withGap = terms;
  withGap.push_back(std::move(both));
  uint32_t step = addDerived(std::move(withGap), id, cause);
  uint32_t none = addNoVersions(pkg, std::move(gap));
  return addDerived(std::move(terms), step, none);
}

/// Whether deciding pkg = v would satisfy incompatibility id.
bool Solver::wouldConflict(uint32_t id, uint32_t pkg, uint32_t v) const {
  for (const Term &t : incompats_[id].terms) {
    if (t.pkg == pkg) {
      if (t.bits.test(v) != t.positive)
        return false;
    } else if (relation(t) != Relation::Satisfied) {
      return false;
    }
  }
  return true;
}

/// Decision making for pkg: chooses a version, adds the facts about it and
/// decides it unless they would conflict at once. Queues pkg for
/// propagation either way.
Status Solver::decide(uint32_t pkg) {
  Package &p = packages_[pkg];
  Bits allowed = assignments_[size_t(p.last)].acc;
  Bits usable = allowed & p.usable;
  if (usable.none()) {
    // Only unusable versions are left: state why the newest is.
    unusableIncompat(pkg, uint32_t(allowed.highest()));
    enqueue(pkg);
    return ok();
  }
  uint32_t v = p.preferred >= 0 && usable.test(uint32_t(p.preferred))
                   ? uint32_t(p.preferred)
                   : uint32_t(usable.highest());

  bool conflict = false;
  for (size_t k = 0; k < p.info[v].deps.size(); ++k) {
    int32_t id = p.info[v].depIncompat[k];
    if (id == kUnset) {
      const std::string &name = *p.info[v].deps[k].first;
      const Constraint &c = *p.info[v].deps[k].second;
      // The run of adjacent versions with the same dependency.
      auto sameDep = [&](uint32_t i) {
        const CandidateVersion &cv = p.versions[i];
        auto it = cv.dependencies.find(name);
        return it != cv.dependencies.end() && it->second.text() == c.text();
      };
      uint32_t lo = v, hi = v;
      while (lo > 0 && sameDep(lo - 1))
        --lo;
      while (hi + 1 < p.size && sameDep(hi + 1))
        ++hi;
      Expected<int32_t> made = addDependency(pkg, lo, hi, intern(name), c);
      if (!made)
        return Unexpected(made.error());
      id = *made;
      for (uint32_t i = lo; i <= hi; ++i) {
        VersionInfo &info = p.info[i];
        for (size_t j = 0; j < info.deps.size(); ++j)
          if (*info.deps[j].first == name)
            info.depIncompat[j] = id;
      }
    }
    if (id >= 0 && !conflict && wouldConflict(uint32_t(id), pkg, v))
      conflict = true;
  }
  if (!conflict)
    addAssignment(pkg, true, Bits::range(p.size, v, v), -1);
  enqueue(pkg);
  return ok();
}

Resolution Solver::solution() const {
  Resolution out;
  for (uint32_t id = 1; id < packages_.size(); ++id) {
    const Package &p = packages_[id];
    if (p.decision < 0)
      continue;
    const CandidateVersion &cv = p.versions[size_t(p.decision)];
    out.versions.emplace(p.name, cv.version);
    std::vector<std::string> &deps = out.dependencies[p.name];
    for (const auto &dep : cv.dependencies)
      deps.push_back(dep.first);
  }
  return out;
}

Expected<Resolution> Solver::run() {
  Package &root = packages_.emplace_back();
  root.name = request_.rootName;
  root.loaded = true;
  root.size = 1;
  root.usable = Bits::all(1);
  assignments_.push_back(Assignment{0, true, Bits::all(1), true, Bits::all(1),
                                    0, -1, -1});
  root.last = 0;
  root.decision = 0;

  for (const auto &[name, constraint] : request_.roots) {
    Expected<int32_t> id = addDependency(0, 0, 0, intern(name), constraint);
    if (!id)
      return Unexpected(id.error());
    if (*id >= 0 && isTerminal(incompats_[size_t(*id)]))
      return makeError(ErrorCode::Conflict, explain(uint32_t(*id)));
  }
  enqueue(0);
  for (;;) {
    if (!propagate())
      return makeError(ErrorCode::Conflict, explain(terminal_));
    std::optional<uint32_t> next = pick();
    if (!next)
      return solution();
    if (Status s = decide(*next); !s)
      return Unexpected(s.error());
  }
}

//===----------------------------------------------------------------------===//
// Explanations
//===----------------------------------------------------------------------===//

std::string Solver::termText(const Term &t) const {
  if (t.pkg == 0)
    return request_.rootName;
  const std::string &name = packages_[t.pkg].name;
  return t.set.isAny() ? name : name + " " + t.set.str();
}

/// "X 1.0.0", "X >=1.0.0, <2.0.0", or for all versions "every version of X"
/// (or "X" when !everyVersion).
std::string Solver::rangeText(uint32_t pkg, uint32_t lo, uint32_t hi,
                              bool everyVersion) const {
  if (pkg == 0)
    return request_.rootName;
  const std::string &name = packages_[pkg].name;
  VersionSet set = runSet(pkg, lo, hi);
  if (set.isAny())
    return everyVersion ? "every version of " + name : name;
  return name + " " + set.str();
}

/// One incompatibility as a clause.
std::string Solver::describe(uint32_t id) const {
  const Incompat &in = incompats_[id];
  const std::string &name = packages_[in.pkg].name;
  switch (in.kind) {
  case Kind::Dependency: {
    const Package &dep = packages_[in.dep];
    const VersionSet &wanted = in.constraint->set();
    return rangeText(in.pkg, in.lo, in.hi, true) + " depends on " +
           (wanted.isAny() ? dep.name : dep.name + " " + wanted.str());
  }
  case Kind::NoVersions:
    return "no versions of " + name + " match " + in.range.str();
  case Kind::NotFound:
    return name + " does not exist";
  case Kind::Yanked:
    return rangeText(in.pkg, in.lo, in.hi, true) + " is yanked";
  case Kind::Iree:
    return rangeText(in.pkg, in.lo, in.hi, true) + " requires IREE " +
           in.constraint->str() + ", but IREE " +
           request_.ireeVersion->str() + " is in use";
  case Kind::NoBuild:
    return rangeText(in.pkg, in.lo, in.hi, true) + " has no build for " +
           request_.platforms[in.platform].str();
  case Kind::Derived:
    break;
  }

  std::vector<std::string> positive, negative;
  bool root = false;
  for (const Term &t : in.terms) {
    if (t.pkg == 0 && t.positive)
      root = true;
    else
      (t.positive ? positive : negative).push_back(termText(t));
  }
  if (positive.empty() && negative.empty())
    return "version solving failed";
  if (root && positive.empty())
    return request_.rootName + " requires " + joinList(negative, " or ");
  if (negative.empty())
    return positive.size() == 1
               ? positive[0] + " is forbidden"
               : joinList(positive, " and ") + " are incompatible";
  if (positive.empty())
    return joinList(negative, " or ") + " is required";
  if (positive.size() == 1)
    return positive[0] + " requires " + joinList(negative, " or ");
  return joinList(positive, " and ") + " together require " +
         joinList(negative, " or ");
}

/// The explanation of terminal's derivation graph, as described in pub's
/// solver documentation: depth first, one line per derived
/// incompatibility, numbering only lines referred to again, collapsing
/// linear chains.
std::string Solver::explain(uint32_t terminal) {
  auto derived = [&](int32_t id) {
    return incompats_[size_t(id)].kind == Kind::Derived;
  };
  // How many derived incompatibilities each one causes.
  std::unordered_map<uint32_t, int> uses;
  {
    std::vector<uint32_t> stack{terminal};
    std::unordered_map<uint32_t, bool> seen{{terminal, true}};
    while (!stack.empty()) {
      const Incompat &in = incompats_[stack.back()];
      stack.pop_back();
      if (in.kind != Kind::Derived)
        continue;
      for (int32_t c : {in.cause1, in.cause2}) {
        ++uses[uint32_t(c)];
        if (!seen[uint32_t(c)]) {
          seen[uint32_t(c)] = true;
          stack.push_back(uint32_t(c));
        }
      }
    }
  }

  struct Line {
    std::string text;
    int number = 0;
  };
  std::vector<Line> lines;
  std::unordered_map<uint32_t, int> numbers;
  int nextNumber = 1;
  auto numbered = [&](uint32_t id) {
    return describe(id) + " (" + std::to_string(numbers.at(id)) + ")";
  };
  auto number = [&](uint32_t id) {
    if (!lines.back().number)
      lines.back().number = nextNumber++;
    numbers[id] = lines.back().number;
  };
  auto write = [&](std::string text) {
    lines.push_back(Line{std::move(text) + ".", 0});
  };

  std::function<void(uint32_t)> visit = [&](uint32_t id) {
    const Incompat &in = incompats_[id];
    uint32_t c1 = uint32_t(in.cause1), c2 = uint32_t(in.cause2);
    std::string conclusion = describe(id);
    if (derived(in.cause1) && derived(in.cause2)) {
      bool n1 = numbers.count(c1), n2 = numbers.count(c2);
      if (n1 && n2) {
        write("Because " + numbered(c1) + " and " + numbered(c2) + ", " +
              conclusion);
      } else if (n1 || n2) {
        uint32_t known = n1 ? c1 : c2, other = n1 ? c2 : c1;
        visit(other);
        write("And because " + numbered(known) + ", " + conclusion);
      } else {
        auto simple = [&](uint32_t c) {
          const Incompat &x = incompats_[c];
          return !derived(x.cause1) && !derived(x.cause2);
        };
        if (simple(c1) || simple(c2)) {
          uint32_t first = simple(c1) ? c2 : c1;
          uint32_t second = first == c1 ? c2 : c1;
          visit(first);
          visit(second);
          write("Thus, " + conclusion);
        } else {
          visit(c1);
          number(c1);
          lines.push_back(Line{});
          visit(c2);
          write("And because " + numbered(c1) + ", " + conclusion);
        }
      }
    } else if (derived(in.cause1) || derived(in.cause2)) {
      uint32_t inner = derived(in.cause1) ? c1 : c2;
      uint32_t external = inner == c1 ? c2 : c1;
      const Incompat &d = incompats_[inner];
      if (numbers.count(inner)) {
        write("Because " + describe(external) + " and " + numbered(inner) +
              ", " + conclusion);
      } else if (uses[inner] < 2 &&
                 derived(d.cause1) != derived(d.cause2) &&
                 !numbers.count(uint32_t(derived(d.cause1) ? d.cause1
                                                           : d.cause2))) {
        uint32_t prior = uint32_t(derived(d.cause1) ? d.cause1 : d.cause2);
        uint32_t priorExternal =
            uint32_t(prior == uint32_t(d.cause1) ? d.cause2 : d.cause1);
        visit(prior);
        write("And because " + describe(priorExternal) + " and " +
              describe(external) + ", " + conclusion);
      } else {
        visit(inner);
        write("And because " + describe(external) + ", " + conclusion);
      }
    } else {
      write("Because " + describe(c1) + " and " + describe(c2) + ", " +
            conclusion);
    }
    if (uses[id] >= 2)
      number(id);
  };
  visit(terminal);

  size_t width = 0;
  for (const Line &l : lines)
    if (l.number)
      width = std::max(width, std::to_string(l.number).size() + 3);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i)
      out += '\n';
    const Line &l = lines[i];
    if (l.text.empty())
      continue;
    std::string prefix =
        l.number ? "(" + std::to_string(l.number) + ") " : std::string();
    prefix.resize(width, ' ');
    out += prefix + l.text;
  }
  return out;
}

} // namespace

Expected<Resolution> resolve(const ResolveRequest &request,
                             PackageSource &source) {
  Solver solver(request, source);
  return solver.run();
}

} // namespace ireepkg
