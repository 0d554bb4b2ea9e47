//! Typed, lenient fields for the JSON that providers stream.
//!
//! The stream decoders read each event's JSON into small typed structs that borrow their
//! strings from the event's data (no `serde_json::Value` per event, and no copy of a string
//! without escapes). Providers and the servers that copy them are not strict, so a field
//! here never fails the event: a value of another JSON type than expected counts as
//! [`Text::Other`] (or `Other`, or `None`), as reading it from a `Value` with `as_str` or
//! `as_u64` would, and unknown fields are skipped. Only text that is not JSON at all is an
//! error.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A string field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Text<'a> {
    /// The field is absent.
    #[default]
    Missing,
    /// The field holds something else than a string (`null` included).
    Other,
    /// The string, borrowed from the event's data unless it had escapes.
    Str(Cow<'a, str>),
}

impl<'a> Text<'a> {
    /// The string, if the field is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Text::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The string, if the field is one and not empty.
    pub fn non_empty(&self) -> Option<&str> {
        self.as_str().filter(|s| !s.is_empty())
    }

    /// The string taken out, if the field is one and not empty.
    pub fn take_non_empty(self) -> Option<String> {
        match self {
            Text::Str(s) if !s.is_empty() => Some(s.into_owned()),
            _ => None,
        }
    }
}

/// A non-negative integer field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Count {
    /// The field is absent.
    #[default]
    Missing,
    /// The field holds something else than a non-negative integer.
    Other,
    /// The number.
    Is(u64),
}

impl Count {
    /// The number, if the field is one.
    pub fn get(self) -> Option<u64> {
        match self {
            Count::Is(n) => Some(n),
            _ => None,
        }
    }

    /// The number, 0 when the field is absent or not a number.
    pub fn or_zero(self) -> u64 {
        self.get().unwrap_or(0)
    }

    /// Whether the field is present (with any value).
    pub fn is_present(self) -> bool {
        self != Count::Missing
    }
}

/// A field that is `true` only when it holds JSON `true`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

/// A field that is only looked at for its presence (any value, `null` included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen(pub bool);

impl<'de> Deserialize<'de> for Seen {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer).map(|_| Seen(true))
    }
}

/// An object field, read into `T` (whose own fields are lenient too).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Object<T> {
    /// The field is absent.
    #[default]
    Missing,
    /// The field holds something else than an object (`null` included).
    Other,
    /// The object.
    Is(T),
}

impl<T> Object<T> {
    /// The object, if the field is one.
    pub fn get(&self) -> Option<&T> {
        match self {
            Object::Is(t) => Some(t),
            _ => None,
        }
    }

    /// The object taken out, if the field is one.
    pub fn into_option(self) -> Option<T> {
        match self {
            Object::Is(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the field is present (with any value).
    pub fn is_present(&self) -> bool {
        !matches!(self, Object::Missing)
    }
}

/// An array field: `None` when absent or not an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T>(pub Option<Vec<T>>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(None)
    }
}

impl<T> List<T> {
    /// The elements (none when the field is absent or not an array).
    pub fn items(&self) -> &[T] {
        self.0.as_deref().unwrap_or_default()
    }
}

/// The first element of an array field that [`Wanted::wanted`] accepts (`None`: the field is
/// absent, not an array, or has no such element); the elements after it are skipped unread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct First<T>(pub Option<T>);

impl<T> Default for First<T> {
    fn default() -> Self {
        First(None)
    }
}

/// Which element of an array a [`First`] field keeps.
pub trait Wanted {
    /// Whether this is the element to keep.
    fn wanted(&self) -> bool;
}

/// Tool arguments: a JSON string (the usual form), or an object (some servers send them
/// parsed); anything else is `Other`.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Arguments<'a> {
    /// The field is absent.
    #[default]
    Missing,
    /// The field holds something else.
    Other,
    /// The argument text.
    Text(Cow<'a, str>),
    /// Arguments sent as an object.
    Object(serde_json::Value),
}

/// What a lenient field makes of each kind of JSON value; anything it does not take is the
/// field's "other" value.
trait Lenient<'de>: Sized {
    /// The field holds a value of another type.
    fn other() -> Self;
    /// A string, borrowed when the data had no escapes.
    fn string(_: Cow<'de, str>) -> Self {
        Self::other()
    }
    /// A non-negative integer.
    fn unsigned(_: u64) -> Self {
        Self::other()
    }
    /// A boolean.
    fn boolean(_: bool) -> Self {
        Self::other()
    }
    /// An object: read it, or skip it.
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::other())
    }
    /// An array: read it, or skip it.
    fn array<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::other())
    }
}

/// The visitor of any [`Lenient`] field.
struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Lenient<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok(T::boolean(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::unsigned(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok(u64::try_from(v).map_or_else(|_| T::other(), T::unsigned))
    }

    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<T, E> {
        Ok(T::string(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::string(Cow::Owned(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<T, E> {
        Ok(T::string(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::object(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::array(seq)
    }
}

/// Implements `Deserialize` through [`LenientVisitor`].
macro_rules! lenient_deserialize {
    ($($ty:ty),* $(,)?) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(LenientVisitor(PhantomData))
            }
        }
    )*};
}

impl<'de: 'a, 'a> Lenient<'de> for Text<'a> {
    fn other() -> Self {
        Text::Other
    }
    fn string(s: Cow<'de, str>) -> Self {
        Text::Str(s)
    }
}

impl<'de> Lenient<'de> for Count {
    fn other() -> Self {
        Count::Other
    }
    fn unsigned(n: u64) -> Self {
        Count::Is(n)
    }
}

impl<'de> Lenient<'de> for Flag {
    fn other() -> Self {
        Flag(false)
    }
    fn boolean(b: bool) -> Self {
        Flag(b)
    }
}

lenient_deserialize!(Count, Flag);

impl<'de: 'a, 'a> Lenient<'de> for Arguments<'a> {
    fn other() -> Self {
        Arguments::Other
    }
    fn string(s: Cow<'de, str>) -> Self {
        Arguments::Text(s)
    }
    fn object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        serde_json::Value::deserialize(MapAccessDeserializer::new(map)).map(Arguments::Object)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Arguments<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Lenient<'de> for Object<T> {
    fn other() -> Self {
        Object::Other
    }
    fn object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Object::Is)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Lenient<'de> for List<T> {
    fn other() -> Self {
        List(None)
    }
    fn array<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(List(Some(items)))
    }
}

impl<'de, T: Deserialize<'de> + Wanted> Lenient<'de> for First<T> {
    fn other() -> Self {
        First(None)
    }
    fn array<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while let Some(item) = seq.next_element::<T>()? {
            if item.wanted() {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(First(Some(item)));
            }
        }
        Ok(First(None))
    }
}

impl<'de, T: Deserialize<'de> + Wanted> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Probe<'a> {
        #[serde(borrow)]
        text: Text<'a>,
        count: Count,
        flag: Flag,
        seen: Seen,
        #[serde(borrow)]
        inner: Object<Box<Probe<'a>>>,
        list: List<Count>,
    }

    fn probe(json: &str) -> Probe<'_> {
        match serde_json::from_str::<Object<Probe>>(json) {
            Ok(Object::Is(p)) => p,
            other => panic!("{json}: {other:?}"),
        }
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        assert!(matches!(
            probe(r#"{"text": "plain"}"#).text,
            Text::Str(Cow::Borrowed("plain"))
        ));
        let escaped = probe(r#"{"text": "a\"b"}"#).text;
        assert!(matches!(&escaped, Text::Str(Cow::Owned(s)) if s == "a\"b"));
    }

    #[test]
    fn other_types_are_other_and_never_fail() {
        let p = probe(
            r#"{"text": {"a": [1, {"b": 2}]}, "count": -3, "flag": "yes", "seen": null,
                "inner": [1, 2], "list": {"x": 1}, "unknown": [null, true, 1.5]}"#,
        );
        assert_eq!(p.text, Text::Other);
        assert_eq!(p.count, Count::Other);
        assert_eq!(p.flag, Flag(false));
        assert_eq!(p.seen, Seen(true));
        assert!(matches!(p.inner, Object::Other));
        assert_eq!(p.list, List(None));
        let p = probe(r#"{"count": 1.0, "text": null, "inner": null}"#);
        assert_eq!(p.count, Count::Other);
        assert_eq!(p.text, Text::Other);
        assert!(p.inner.is_present() && p.inner.get().is_none());
    }

    #[test]
    fn values_of_the_right_type_are_read() {
        let p = probe(
            r#"{"text": "", "count": 7, "flag": true, "inner": {"count": 2, "text": "x"},
                "list": [1, "a", 3]}"#,
        );
        assert_eq!(p.text.as_str(), Some(""));
        assert_eq!(p.text.non_empty(), None);
        assert_eq!(p.count.get(), Some(7));
        assert_eq!(p.flag, Flag(true));
        assert_eq!(p.seen, Seen(false));
        let inner = p
            .inner
            .get()
            .map(|i| (i.count, i.text.as_str().map(str::to_string)));
        assert_eq!(inner, Some((Count::Is(2), Some("x".to_string()))));
        assert_eq!(p.list.items(), &[Count::Is(1), Count::Other, Count::Is(3)]);
        assert_eq!(probe("{}").count, Count::Missing);
    }

    #[test]
    fn a_payload_that_is_no_object_is_other() {
        for json in ["[1]", "\"s\"", "3", "null"] {
            assert!(matches!(
                serde_json::from_str::<Object<Probe>>(json),
                Ok(Object::Other)
            ));
        }
        assert!(serde_json::from_str::<Object<Probe>>("{\"text\": ").is_err());
    }
}
