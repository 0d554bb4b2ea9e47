//! `json!`, as serde_json's, through a few shared functions.
//!
//! serde_json's `json!` expands every object entry in place: the key copied into a new
//! `String`, `to_value(&v).unwrap()` with its own panic location, `Map::insert` and the drop
//! of the value it returns. With hundreds of `json!` objects that inline code is a large part
//! of the wasm. This `json!` takes the same syntax and builds the same `Value`s, but each
//! entry is one call: [`field`] for an interpolated value (written into the entry through its
//! [`ToValue`] vtable: the `Value` serde's `Serialize` gave, without serde's serializer), [`put`]
//! for a literal; an interpolated value outside an object is one call to [`to`] (one copy per
//! value type, not per use). The crate's modules use it with
//! `use crate::json::json;`.
//!
//! JSON text is read into a `Value` by [`parse`] (`json/parse.rs`), the crate's own reader,
//! instead of serde_json's deserializer.

mod parse;
pub(crate) use parse::parse;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use parse::parse_bytes;

use serde_json::Value;

use crate::value::ToValue;
pub(crate) use crate::value::{field, put};

/// An interpolated value, as serde_json's `json!` converts it.
#[inline(never)]
pub(crate) fn to<T: ToValue + ?Sized>(value: &T) -> Value {
    value.to_value()
}

/// Construct a `serde_json::Value` from a JSON literal, exactly as `serde_json::json!` does
/// (same syntax, same result), with less code per use.
macro_rules! json {
    ($($json:tt)+) => {
        $crate::json::json_internal!($($json)+)
    };
}
pub(crate) use json;

/// The token muncher behind [`json!`]: serde_json's `json_internal!` (MIT OR Apache-2.0),
/// with each object entry and interpolated value turned into a call.
macro_rules! json_internal {
    // The inside of an array [...]: a vec![...] of the elements.
    (@array [$($elems:expr,)*]) => {
        vec![$($elems,)*]
    };
    (@array [$($elems:expr),*]) => {
        vec![$($elems),*]
    };
    (@array [$($elems:expr,)*] null $($rest:tt)*) => {
        $crate::json::json_internal!(@array [$($elems,)* $crate::json::json_internal!(null)] $($rest)*)
    };
    (@array [$($elems:expr,)*] true $($rest:tt)*) => {
        $crate::json::json_internal!(@array [$($elems,)* $crate::json::json_internal!(true)] $($rest)*)
    };
    (@array [$($elems:expr,)*] false $($rest:tt)*) => {
        $crate::json::json_internal!(@array [$($elems,)* $crate::json::json_internal!(false)] $($rest)*)
    };
    (@array [$($elems:expr,)*] [$($array:tt)*] $($rest:tt)*) => {
        $crate::json::json_internal!(@array [$($elems,)* $crate::json::json_internal!([$($array)*])] $($rest)*)
    };
    (@array [$($elems:expr,)*] {$($map:tt)*} $($rest:tt)*) => {
        $crate::json::json_internal!(@array [$($elems,)* $crate::json::json_internal!({$($map)*})] $($rest)*)
    };
    (@array [$($elems:expr,)*] $next:expr, $($rest:tt)*) => {
        $crate::json::json_internal!(@array [$($elems,)* $crate::json::json_internal!($next),] $($rest)*)
    };
    (@array [$($elems:expr,)*] $last:expr) => {
        $crate::json::json_internal!(@array [$($elems,)* $crate::json::json_internal!($last)])
    };
    (@array [$($elems:expr),*] , $($rest:tt)*) => {
        $crate::json::json_internal!(@array [$($elems,)*] $($rest)*)
    };
    (@array [$($elems:expr),*] $unexpected:tt $($rest:tt)*) => {
        $crate::json::json_unexpected!($unexpected)
    };

    // The inside of an object {...}: each entry is put into the map variable. Two copies of
    // the input tokens: one to match on, one to point errors at.
    (@object $object:ident () () ()) => {};
    // An interpolated value: written into the entry through its `ToValue` vtable (one call,
    // no `Value` on the caller's stack).
    (@object $object:ident [$($key:tt)+] (@to $value:expr) , $($rest:tt)*) => {
        $crate::json::field(&mut $object, ::core::convert::AsRef::<str>::as_ref(&($($key)+)), &$value);
        $crate::json::json_internal!(@object $object () ($($rest)*) ($($rest)*));
    };
    (@object $object:ident [$($key:tt)+] (@to $value:expr) $unexpected:tt $($rest:tt)*) => {
        $crate::json::json_unexpected!($unexpected);
    };
    (@object $object:ident [$($key:tt)+] (@to $value:expr)) => {
        $crate::json::field(&mut $object, ::core::convert::AsRef::<str>::as_ref(&($($key)+)), &$value);
    };
    (@object $object:ident [$($key:tt)+] ($value:expr) , $($rest:tt)*) => {
        $crate::json::put(&mut $object, ::core::convert::AsRef::<str>::as_ref(&($($key)+)), $value);
        $crate::json::json_internal!(@object $object () ($($rest)*) ($($rest)*));
    };
    (@object $object:ident [$($key:tt)+] ($value:expr) $unexpected:tt $($rest:tt)*) => {
        $crate::json::json_unexpected!($unexpected);
    };
    (@object $object:ident [$($key:tt)+] ($value:expr)) => {
        $crate::json::put(&mut $object, ::core::convert::AsRef::<str>::as_ref(&($($key)+)), $value);
    };
    (@object $object:ident ($($key:tt)+) (: null $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object [$($key)+] ($crate::json::json_internal!(null)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: true $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object [$($key)+] ($crate::json::json_internal!(true)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: false $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object [$($key)+] ($crate::json::json_internal!(false)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: [$($array:tt)*] $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object [$($key)+] ($crate::json::json_internal!([$($array)*])) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: {$($map:tt)*} $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object [$($key)+] ($crate::json::json_internal!({$($map)*})) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr , $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object [$($key)+] (@to $value) , $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr) $copy:tt) => {
        $crate::json::json_internal!(@object $object [$($key)+] (@to $value));
    };
    (@object $object:ident ($($key:tt)+) (:) $copy:tt) => {
        $crate::json::json_internal!();
    };
    (@object $object:ident ($($key:tt)+) () $copy:tt) => {
        $crate::json::json_internal!();
    };
    (@object $object:ident () (: $($rest:tt)*) ($colon:tt $($copy:tt)*)) => {
        $crate::json::json_unexpected!($colon);
    };
    (@object $object:ident ($($key:tt)*) (, $($rest:tt)*) ($comma:tt $($copy:tt)*)) => {
        $crate::json::json_unexpected!($comma);
    };
    (@object $object:ident () (($key:expr) : $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object ($key) (: $($rest)*) (: $($rest)*));
    };
    (@object $object:ident ($($key:tt)*) (: $($unexpected:tt)+) $copy:tt) => {
        $crate::json::json_expect_expr_comma!($($unexpected)+);
    };
    (@object $object:ident ($($key:tt)*) ($tt:tt $($rest:tt)*) $copy:tt) => {
        $crate::json::json_internal!(@object $object ($($key)* $tt) ($($rest)*) ($($rest)*));
    };

    // The main rules.
    (null) => {
        ::serde_json::Value::Null
    };
    (true) => {
        ::serde_json::Value::Bool(true)
    };
    (false) => {
        ::serde_json::Value::Bool(false)
    };
    ([]) => {
        ::serde_json::Value::Array(vec![])
    };
    ([ $($tt:tt)+ ]) => {
        ::serde_json::Value::Array($crate::json::json_internal!(@array [] $($tt)+))
    };
    ({}) => {
        ::serde_json::Value::Object(::serde_json::Map::new())
    };
    ({ $($tt:tt)+ }) => {
        ::serde_json::Value::Object({
            let mut object = ::serde_json::Map::new();
            $crate::json::json_internal!(@object object () ($($tt)+) ($($tt)+));
            object
        })
    };
    // Any ToValue value: numbers, strings, variables, expressions.
    ($other:expr) => {
        $crate::json::to(&$other)
    };
}
pub(crate) use json_internal;

/// No rule takes a token: points a syntax error at it (used only by malformed input).
#[allow(unused_macros)]
macro_rules! json_unexpected {
    () => {};
}
#[allow(unused_imports)]
pub(crate) use json_unexpected;

/// Points a syntax error at what follows an expression that should end with a comma (used
/// only by malformed input).
#[allow(unused_macros)]
macro_rules! json_expect_expr_comma {
    ($e:expr , $($tt:tt)*) => {};
}
#[allow(unused_imports)]
pub(crate) use json_expect_expr_comma;

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// Ours builds what serde_json's builds, for every form of the syntax.
    #[test]
    fn builds_what_serde_json_builds() {
        let name = String::from("Ada");
        let key = String::from("dynamic");
        let list = vec![1, 2, 3];
        let none: Option<u8> = None;
        let nested = serde_json::json!({"x": [1, {"y": null}]});
        macro_rules! both {
            ($($t:tt)+) => {
                assert_eq!(json!($($t)+), serde_json::json!($($t)+));
            };
        }
        both!(null);
        both!(true);
        both!(1.5);
        both!("text");
        both!([]);
        both!({});
        both!([null, true, false, 1, "a", [2], {"b": 3},]);
        both!({
            "name": name,
            "len": name.len(),
            "borrowed": &name,
            "list": list,
            "none": none,
            "nested": nested,
            "object": {"inner": [true, false, null], "empty": {}},
            (key): "from a String key",
            "sum": 1 + 2,
            "last": -4
        });
        both!({"trailing": 1,});
        let value: Value = json!({ "a": json!([1, 2]) });
        assert_eq!(value["a"][1], 2);
    }
}
