// A result struct's fields, declared once as a list of (name, member) pairs: the summary codec, the
// round-trip test and anything else that walks a result read the list, and a compile-time check holds the
// list to the struct, so that a member added to the struct and not to its list fails the build instead of
// being dropped from summaries without a word.
#pragma once

#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace shardscope::analysis {

template <class T, class M>
struct Field {
  const char* name;  // the summary record's key
  M T::*member;
  using Struct = T;
  using Type = M;
};

template <class T, class M>
constexpr Field<T, M> field(const char* name, M T::*member) {
  return {name, member};
}

// Fields<T>::list is a std::tuple of T's Field-s; specialised for each result struct (summary_fields.h).
template <class T>
struct Fields;

template <class T>
concept Described = requires {
  Fields<T>::list;
};

template <class T, class F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... each) { (f(each), ...); }, Fields<T>::list);
}

namespace detail {

template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

// Converts to any member's type; an optional is built through its own converting constructor instead (both
// routes at once would be ambiguous).
struct AnyMember {
  template <class T>
  requires(!kIsOptional<T>) operator T() const;
};

// An aggregate's members: the most AnyMember-s that brace-initialise it.
template <class T, class... A>
constexpr size_t member_count() {
  if constexpr (requires { T{A{}..., AnyMember{}}; }) return member_count<T, A..., AnyMember>();
  else
    return sizeof...(A);
}

}  // namespace detail

// Fields<T>::not_carried, where there is one: a tuple of the members summaries leave out on purpose (each
// with its reason where it is declared), so that leaving one out is a decision written down.
template <class T>
constexpr size_t not_carried_count() {
  if constexpr (requires { Fields<T>::not_carried; })
    return std::tuple_size_v<std::remove_cvref_t<decltype(Fields<T>::not_carried)>>;
  else
    return 0;
}

// True when T's members are as many as its list names plus those it leaves out.
template <class T>
constexpr bool fields_cover_struct() {
  static_assert(std::is_aggregate_v<T>, "a described result is a plain aggregate");
  return detail::member_count<T>() ==
         std::tuple_size_v<std::remove_cvref_t<decltype(Fields<T>::list)>> + not_carried_count<T>();
}

}  // namespace shardscope::analysis
