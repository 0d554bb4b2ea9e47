//! Reading typed data from a `serde_json::Value` through one shared, non-generic path.
//!
//! Every request's params, tool's arguments and stored record arrives as a `Value`. Deriving
//! serde's `Deserialize` for each of those types and calling `serde_json::from_value` makes the
//! compiler emit a deserializer per type and per visitor method (`deserialize_any`,
//! `visit_map`, `visit_seq`, `next_value_seed` …): hundreds of kilobytes of near-identical wasm.
//! `#[derive(FromValue)]` (from the `draftsmith-derive` crate, compile time only) instead
//! generates a short [`FromValue`] impl per type that calls the helpers here: [`read_struct`]
//! walks an object's fields and [`read_variant`], [`read_tagged`], [`read_adjacent`] pick an
//! enum's variant. The derive reads the type's existing `#[serde(...)]` attributes (renames,
//! aliases, defaults, `deny_unknown_fields`, `skip`, tags), so a type keeps one description for
//! both directions, and its errors are serde's own (built with `serde::de::Error`), byte for
//! byte what `serde_json::from_value` says.
//!
//! A type the derive does not cover (a generic type, an attribute it does not know) keeps
//! serde and gets a [`FromValue`] impl through [`serde_from_value!`](crate::serde_from_value),
//! so a derived type can still contain it.
//!
//! The other direction is [`ToValue`]: `#[derive(ToValue)]` writes a type as the `Value`
//! serde's derived `Serialize` wrote (`serde_json::to_value`), from the same attributes, one
//! call to [`field`] per field; the crate's `json!` and records go through it, so serde's
//! serializer into `Value` is not in the wasm. Derived types keep a `Serialize` that
//! serializes that `Value` (for tests and callers outside the crate): its text lists an
//! object's keys sorted, where serde's derive listed them in declaration order, so text that
//! must keep that order is written apart (`ToolResult::to_text`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

pub use draftsmith_derive::{FromValue, ToValue};
use serde::de::Error as _;
use serde_json::{Map, Value};

/// What went wrong: serde_json's error, with serde's messages.
pub type Error = serde_json::Error;

/// A type read from a `serde_json::Value`, as serde would deserialize it with
/// `serde_json::from_value`.
pub trait FromValue: Sized {
    /// Read a value of this type.
    fn from_value(value: Value) -> Result<Self, Error>;

    /// Whether a struct field of this type may be absent without a default: only an
    /// `Option` may, and is then `None` (as with serde); for any other type it is an error.
    const OPTIONAL: bool = false;

    /// The value of an absent field of this type without a default: `Some(None)` for an
    /// `Option`, else none.
    fn absent() -> Option<Self> {
        None
    }
}

/// The value of a struct field of type `T` that was absent and has no default: `None` for an
/// `Option`. For any other type [`read_struct`] has already refused the input.
#[inline]
pub fn absent<T: FromValue>() -> T {
    match T::absent() {
        Some(value) => value,
        None => never_absent(),
    }
}

/// Read a struct field's value into its empty slot (what a derived `FromValue` does for each
/// field read by its type). Not inlined, so each field type has one copy of it, not each
/// field: the derived readers are a call per field.
///
/// The value comes by reference (and is taken here), so that each field's call passes a
/// pointer rather than a copy of the `Value`.
#[inline(never)]
pub fn slot<T: FromValue>(slot: &mut Option<T>, value: &mut Value) -> Result<(), Error> {
    let value = T::from_value(std::mem::take(value))?;
    // The slot is empty (each field is handed over once): no drop code for the `None`.
    std::mem::forget(slot.replace(value));
    Ok(())
}

/// A field [`read_struct`] requires was absent: it cannot be, as `read_struct` refused it.
#[cold]
#[inline(never)]
pub fn never_absent() -> ! {
    panic!("FromValue: a required field was absent after read_struct checked it")
}

/// Read a `T` from a `Value` (the counterpart of `serde_json::from_value`).
pub fn from_value<T: FromValue>(value: Value) -> Result<T, Error> {
    T::from_value(value)
}

/// Read a `T` from JSON text: parsed into a `Value` first, so JSON text needs no deserializer
/// per type either. Errors in the text say where (`at line …`); errors in the data do not.
pub fn from_str<T: FromValue>(text: &str) -> Result<T, Error> {
    T::from_value(crate::json::parse(text)?)
}

/// Implement [`FromValue`] through serde for a type the derive does not cover.
#[macro_export]
macro_rules! serde_from_value {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::value::FromValue for $ty {
            fn from_value(value: serde_json::Value) -> Result<Self, $crate::value::Error> {
                serde_json::from_value(value)
            }
        }
    )*};
}

/// Implement serde's `Deserialize` through [`FromValue`] (the input read into a `Value`
/// first), for public types that callers outside the crate read with serde. Nothing in the
/// crate itself uses these impls, so they cost the wasm nothing.
#[macro_export]
macro_rules! deserialize_via_value {
    ($($ty:ty),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                <$ty as $crate::value::FromValue>::from_value(value)
                    .map_err(<D::Error as serde::de::Error>::custom)
            }
        }
    )*};
}

/// How serde_json names a `Value` in an "invalid type" message (its `JsonUnexpected`):
/// "null", "boolean `true`", "integer `5`", "floating point `1.5`", "string \"a\"",
/// "sequence", "map". Written here rather than through serde's `Unexpected`, whose `Display`
/// would bring core's float formatting into the wasm (`crate::decimal`); the float is written
/// by serde_json's own float writer, as serde_json writes it.
pub fn unexpected(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

/// serde's "invalid type: {found}, expected {expected}".
#[cold]
fn wrong_type(found: &str, expected: &str) -> Error {
    Error::custom(format_args!("invalid type: {found}, expected {expected}"))
}

/// serde's "invalid value: {found}, expected {expected}".
#[cold]
fn wrong_value(found: &str, expected: &str) -> Error {
    Error::custom(format_args!("invalid value: {found}, expected {expected}"))
}

/// serde's "missing field …".
#[cold]
pub fn missing(field: &'static str) -> Error {
    Error::missing_field(field)
}

/// serde's "invalid type: …, expected …".
#[cold]
pub fn invalid_type(value: &Value, expected: &str) -> Error {
    wrong_type(&unexpected(value), expected)
}

/// The shape of a struct with named fields, as the derive declares it.
#[derive(Debug)]
pub struct Struct {
    /// What serde says it expected: "struct Name" or "struct variant Enum::Variant".
    pub expecting: &'static str,
    /// Every accepted name (each field's name and aliases, sorted per field): serde's `FIELDS`.
    pub names: &'static [&'static str],
    /// The field each of `names` belongs to.
    pub owners: &'static [u8],
    /// Each field's own name.
    pub fields: &'static [&'static str],
    /// Whether each field has a default (read from an array, a missing one is an error).
    pub defaults: &'static [bool],
    /// Whether each field must be given: no default and not an `Option` (serde's "missing
    /// field" when it is absent).
    pub required: &'static [bool],
    /// Whether a name that is no field's is an error (`deny_unknown_fields`).
    pub deny_unknown: bool,
    /// Whether the names that are no field's are kept for a flattened field.
    pub flatten: bool,
}

/// Walk a struct's fields in `value` as serde does: each field's value goes to `set` with the
/// field's index, in the object's order (by reference: `set` takes it); a name given twice
/// (also through an alias), an unknown name under `deny_unknown_fields`, anything but an
/// object (or, for a struct without a flattened field, an array, one element per field) and,
/// after the walk, the first absent `required` field are errors. The other absent fields are
/// left to the caller. Returns the entries that are no field's when the struct has a
/// flattened field (else none).
pub fn read_struct(
    value: Value,
    shape: &Struct,
    set: &mut dyn FnMut(usize, &mut Value) -> Result<(), Error>,
) -> Result<Map<String, Value>, Error> {
    let mut rest = Map::new();
    match value {
        Value::Object(map) => {
            let mut seen = vec![false; shape.fields.len()];
            for (key, mut value) in map {
                let Some(at) = shape.names.iter().position(|n| *n == key) else {
                    if shape.flatten {
                        rest.insert(key, value);
                    } else if shape.deny_unknown {
                        return Err(Error::unknown_field(&key, shape.names));
                    }
                    continue;
                };
                let field = usize::from(shape.owners[at]);
                if std::mem::replace(&mut seen[field], true) {
                    return Err(Error::duplicate_field(shape.fields[field]));
                }
                set(field, &mut value)?;
            }
            let absent = (shape.required.iter().zip(&seen)).position(|(r, s)| *r && !s);
            match absent {
                Some(field) => Err(missing(shape.fields[field])),
                None => Ok(rest),
            }
        }
        // serde reads a struct with a flattened field as a map only.
        Value::Array(items) if !shape.flatten => {
            let len = items.len();
            let mut items = items.into_iter();
            for (field, has_default) in shape.defaults.iter().enumerate() {
                match items.next() {
                    Some(mut item) => set(field, &mut item)?,
                    None if *has_default => {}
                    None => {
                        let n = shape.fields.len();
                        let expected = match n {
                            1 => format!("{} with 1 element", shape.expecting),
                            _ => format!("{} with {n} elements", shape.expecting),
                        };
                        return Err(Error::invalid_length(field, &expected.as_str()));
                    }
                }
            }
            match items.next() {
                Some(_) => Err(Error::invalid_length(len, &"fewer elements in array")),
                None => Ok(rest),
            }
        }
        other => Err(invalid_type(&other, shape.expecting)),
    }
}

/// One field of a struct that a derived `FromValue` reads through [`read_fields`]: where it
/// is, and the functions (shared by every field of its type) that read it, fill it in when it
/// is absent, and drop it.
pub struct Field {
    /// The field's offset in the struct.
    pub offset: usize,
    /// Read the field from a `Value` (taken) into its place: written into uninitialised
    /// memory ([`write_at`]), or assigned over the struct's default ([`assign_at`]).
    pub read: unsafe fn(&mut Value, *mut u8) -> Result<(), Error>,
    /// Fill in the field when it was absent ([`write_absent`], [`write_default`], or
    /// [`keep`] where the struct's default stays).
    pub absent: Place,
    /// Drop the field in place (its type's [`drop_at`]).
    pub drop: Place,
}

/// How a derived `FromValue` builds a struct: its fields (those named in [`Struct`] first,
/// in its order, then the flattened one if any, then the skipped ones), and, for a struct
/// with a container `default`, the functions that write its default and drop it whole.
pub struct Layout {
    /// The fields.
    pub fields: &'static [Field],
    /// With `#[serde(default)]` on the struct: it starts as its default (the first function
    /// writes it) and is dropped whole on an error (the second).
    pub init: Option<(Place, Place)>,
}

/// A function on a place in memory (a struct's or a field's): see [`Field`] and [`Layout`].
pub type Place = unsafe fn(*mut u8);

/// Read a struct described by `shape` and `layout` from `value` into `out`, as serde would:
/// [`read_struct`] walks the fields, each one is read into its place, the flattened one (if
/// any) takes the names that are no field's, and the absent ones are filled in. On an error,
/// what was written is dropped and `out` is left uninitialised.
///
/// # Safety
/// `out` must point to memory for the struct that `layout` describes (aligned, not
/// initialised), each field's offset and functions must be those of its type, and the
/// first `shape.fields.len()` fields must be the named ones in `shape`'s order. On `Ok`, the
/// struct is initialised.
pub unsafe fn read_fields(
    value: Value,
    shape: &Struct,
    layout: &Layout,
    out: *mut u8,
) -> Result<(), Error> {
    if let Some((init, _)) = layout.init {
        // SAFETY: the caller's: `out` is the uninitialised struct.
        unsafe { init(out) };
    }
    let fields = layout.fields;
    let mut written = vec![false; fields.len()];
    let read = |i: usize, value: &mut Value, written: &mut [bool]| {
        let field = &fields[i];
        // SAFETY: the caller's: the field's place and its type's reader.
        unsafe { (field.read)(value, out.add(field.offset))? };
        written[i] = true;
        Ok(())
    };
    let walked =
        read_struct(value, shape, &mut |i, value| read(i, value, &mut written)).and_then(|rest| {
            match shape.flatten {
                true => read(shape.fields.len(), &mut Value::Object(rest), &mut written),
                false => Ok(()),
            }
        });
    match walked {
        Ok(()) => {
            for (field, written) in fields.iter().zip(&written) {
                if !written {
                    // SAFETY: the caller's; an absent required field was an error above.
                    unsafe { (field.absent)(out.add(field.offset)) };
                }
            }
            Ok(())
        }
        Err(e) => {
            match layout.init {
                // SAFETY: the struct was whole (its default, some fields assigned).
                Some((_, drop)) => unsafe { drop(out) },
                None => {
                    for (field, written) in fields.iter().zip(&written) {
                        if *written {
                            // SAFETY: this field was written, and is dropped once.
                            unsafe { (field.drop)(out.add(field.offset)) };
                        }
                    }
                }
            }
            Err(e)
        }
    }
}

/// [`Field::read`] for a field of type `T` in an uninitialised struct.
///
/// # Safety
/// `p` is an aligned, uninitialised `T`.
pub unsafe fn write_at<T: FromValue>(value: &mut Value, p: *mut u8) -> Result<(), Error> {
    let value = T::from_value(std::mem::take(value))?;
    // SAFETY: the caller's.
    unsafe { p.cast::<T>().write(value) };
    Ok(())
}

/// [`Field::read`] for a field of type `T` of a struct that starts as its default.
///
/// # Safety
/// `p` is an initialised `T`.
pub unsafe fn assign_at<T: FromValue>(value: &mut Value, p: *mut u8) -> Result<(), Error> {
    let value = T::from_value(std::mem::take(value))?;
    // SAFETY: the caller's.
    unsafe { *p.cast::<T>() = value };
    Ok(())
}

/// [`Field::absent`] for a field without a default: `None` for an `Option` (any other type
/// was required, and its absence an error before).
///
/// # Safety
/// `p` is an aligned, uninitialised `T`.
pub unsafe fn write_absent<T: FromValue>(p: *mut u8) {
    // SAFETY: the caller's.
    unsafe { p.cast::<T>().write(absent::<T>()) }
}

/// [`Field::absent`] for a field with `#[serde(default)]` (or skipped).
///
/// # Safety
/// `p` is an aligned, uninitialised `T`.
pub unsafe fn write_default<T: Default>(p: *mut u8) {
    // SAFETY: the caller's.
    unsafe { p.cast::<T>().write(T::default()) }
}

/// [`Field::absent`] for a field with `#[serde(default)]` (or skipped) in a struct that
/// starts as its default.
///
/// # Safety
/// `p` is an initialised `T`.
pub unsafe fn assign_default<T: Default>(p: *mut u8) {
    // SAFETY: the caller's.
    unsafe { *p.cast::<T>() = T::default() }
}

/// [`Field::absent`] where the struct's default stays, or for a field that is never absent
/// (a flattened one).
///
/// # Safety
/// None: it does nothing.
pub unsafe fn keep(_: *mut u8) {}

/// [`Field::absent`] for a required field read by a `with` function: never called, as its
/// absence is an error before.
///
/// # Safety
/// None: it never returns.
pub unsafe fn never(_: *mut u8) {
    never_absent()
}

/// [`Field::read`] for a skipped field, which no name reaches: never called.
///
/// # Safety
/// None: it never returns.
pub unsafe fn unread(_: &mut Value, _: *mut u8) -> Result<(), Error> {
    never_absent()
}

/// [`Field::drop`] for a field of type `T`.
///
/// # Safety
/// `p` is an initialised `T`, dropped here and not used again.
pub unsafe fn drop_at<T>(p: *mut u8) {
    // SAFETY: the caller's.
    unsafe { std::ptr::drop_in_place(p.cast::<T>()) }
}

/// The variants of an enum, as the derive declares them.
#[derive(Debug)]
pub struct Variants {
    /// What serde says it expected for the whole enum, e.g. "internally tagged enum Name".
    pub expecting: &'static str,
    /// Every accepted name (each variant's name and aliases): serde's `VARIANTS`.
    pub names: &'static [&'static str],
    /// The variant each of `names` belongs to.
    pub owners: &'static [u8],
}

impl Variants {
    fn find(&self, name: &str) -> Result<usize, Error> {
        match self.names.iter().position(|n| *n == name) {
            Some(at) => Ok(usize::from(self.owners[at])),
            None => Err(Error::unknown_variant(name, self.names)),
        }
    }
}

/// An externally tagged enum's variant: a string names a variant without data, an object of
/// one entry a variant and its data.
pub fn read_variant(value: Value, variants: &Variants) -> Result<(usize, Option<Value>), Error> {
    match value {
        Value::String(name) => Ok((variants.find(&name)?, None)),
        Value::Object(map) if map.len() == 1 => {
            let Some((name, data)) = map.into_iter().next() else {
                return Err(wrong_value("map", "map with a single key"));
            };
            Ok((variants.find(&name)?, Some(data)))
        }
        Value::Object(_) => Err(wrong_value("map", "map with a single key")),
        other => Err(invalid_type(&other, "string or map")),
    }
}

/// The data of an externally tagged unit variant: none, or `null`.
pub fn unit_variant(data: Option<Value>) -> Result<(), Error> {
    match data {
        None | Some(Value::Null) => Ok(()),
        Some(other) => Err(invalid_type(&other, "unit")),
    }
}

/// The data of an externally tagged variant with data (`what`: "newtype variant" or "struct
/// variant").
pub fn variant_data(data: Option<Value>, what: &str) -> Result<Value, Error> {
    match data {
        None => Err(wrong_type("unit variant", what)),
        Some(d) if what == "struct variant" && !(d.is_object() || d.is_array()) => {
            Err(invalid_type(&d, what))
        }
        Some(d) => Ok(d),
    }
}

/// An internally tagged enum's variant (`#[serde(tag = "…")]`): the variant named by the
/// `tag` entry, and the other entries for its fields.
pub fn read_tagged(
    value: Value,
    tag: &'static str,
    variants: &Variants,
) -> Result<(usize, Value), Error> {
    let Value::Object(map) = value else {
        return Err(invalid_type(&value, variants.expecting));
    };
    let mut variant = None;
    let mut rest = Map::new();
    for (key, value) in map {
        if key != tag {
            rest.insert(key, value);
        } else if variant.is_some() {
            return Err(Error::duplicate_field(tag));
        } else {
            variant = Some(variant_name(&value, variants)?);
        }
    }
    match variant {
        Some(variant) => Ok((variant, Value::Object(rest))),
        None => Err(Error::missing_field(tag)),
    }
}

fn variant_name(value: &Value, variants: &Variants) -> Result<usize, Error> {
    match value {
        Value::String(name) => variants.find(name),
        other => Err(invalid_type(other, "variant identifier")),
    }
}

/// An adjacently tagged enum's variant (`#[serde(tag = "…", content = "…")]`): the variant
/// named by the `tag` entry and its data in the `content` entry, if any.
pub fn read_adjacent(
    value: Value,
    tag: &'static str,
    content: &'static str,
    variants: &Variants,
) -> Result<(usize, Option<Value>), Error> {
    let Value::Object(map) = value else {
        return Err(invalid_type(&value, variants.expecting));
    };
    let (mut variant, mut data) = (None, None);
    for (key, value) in map {
        if key == tag {
            if variant.is_some() {
                return Err(Error::duplicate_field(tag));
            }
            variant = Some(variant_name(&value, variants)?);
        } else if key == content {
            if data.is_some() {
                return Err(Error::duplicate_field(content));
            }
            data = Some(value);
        }
    }
    match variant {
        Some(variant) => Ok((variant, data)),
        None => Err(Error::missing_field(tag)),
    }
}

/// The data of an adjacently tagged variant with data.
pub fn adjacent_data(data: Option<Value>, content: &'static str) -> Result<Value, Error> {
    data.ok_or_else(|| Error::missing_field(content))
}

/// serde's error when no variant of an untagged enum fits.
#[cold]
pub fn no_variant(name: &str) -> Error {
    Error::custom(format_args!(
        "data did not match any variant of untagged enum {name}"
    ))
}

/// `null`, as an untagged unit variant.
pub fn unit(value: Value) -> Result<(), Error> {
    match value {
        Value::Null => Ok(()),
        other => Err(invalid_type(&other, "unit")),
    }
}

impl FromValue for Value {
    fn from_value(value: Value) -> Result<Self, Error> {
        Ok(value)
    }
}

impl FromValue for String {
    fn from_value(value: Value) -> Result<Self, Error> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(invalid_type(&other, "a string")),
        }
    }
}

impl FromValue for bool {
    fn from_value(value: Value) -> Result<Self, Error> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(invalid_type(&other, "a boolean")),
        }
    }
}

/// An integer as serde reads one into a type named `expected` that holds `min..=max`.
fn integer(value: &Value, expected: &'static str, min: i128, max: i128) -> Result<i128, Error> {
    let n = match value {
        Value::Number(n) => n,
        other => return Err(invalid_type(other, expected)),
    };
    let v = match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => i128::from(u),
        (_, Some(i)) => i128::from(i),
        _ => return Err(invalid_type(value, expected)),
    };
    match min <= v && v <= max {
        true => Ok(v),
        false => Err(wrong_value(&format!("integer `{n}`"), expected)),
    }
}

macro_rules! integers {
    ($($ty:ident),*) => {$(
        impl FromValue for $ty {
            fn from_value(value: Value) -> Result<Self, Error> {
                let n = integer(&value, stringify!($ty), $ty::MIN as i128, $ty::MAX as i128)?;
                Ok(n as $ty)
            }
        }
    )*};
}
integers!(u8, u16, u32, u64, usize, i32, i64);

impl FromValue for f64 {
    fn from_value(value: Value) -> Result<Self, Error> {
        match value.as_f64() {
            Some(f) => Ok(f),
            None => Err(invalid_type(&value, "f64")),
        }
    }
}

impl FromValue for f32 {
    fn from_value(value: Value) -> Result<Self, Error> {
        match value.as_f64() {
            Some(f) => Ok(f as f32),
            None => Err(invalid_type(&value, "f32")),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: Value) -> Result<Self, Error> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }

    const OPTIONAL: bool = true;

    fn absent() -> Option<Self> {
        Some(None)
    }
}

impl<T: FromValue> FromValue for Box<T> {
    fn from_value(value: Value) -> Result<Self, Error> {
        T::from_value(value).map(Box::new)
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(value: Value) -> Result<Self, Error> {
        let mut out = Vec::new();
        each_item(value, &mut |item, len| {
            if out.capacity() == 0 {
                out.reserve_exact(len);
            }
            out.push(T::from_value(item)?);
            Ok(())
        })?;
        Ok(out)
    }
}

/// An array's items, each to `item` with the array's length; serde's error for anything but
/// an array. One copy of the loop for every item type (`collect` into a `Result` would
/// instantiate still more per type).
fn each_item(
    value: Value,
    item: &mut dyn FnMut(Value, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    match value {
        Value::Array(items) => {
            let len = items.len();
            for each in items {
                item(each, len)?;
            }
            Ok(())
        }
        other => Err(invalid_type(&other, "a sequence")),
    }
}

impl<T: FromValue + Ord> FromValue for BTreeSet<T> {
    fn from_value(value: Value) -> Result<Self, Error> {
        let mut out = BTreeSet::new();
        for item in Vec::<T>::from_value(value)? {
            out.insert(item);
        }
        Ok(out)
    }
}

impl FromValue for crate::sort::StrSet {
    fn from_value(value: Value) -> Result<Self, Error> {
        Ok(Vec::<String>::from_value(value)?.into_iter().collect())
    }
}

impl FromValue for serde_json::Number {
    fn from_value(value: Value) -> Result<Self, Error> {
        match value {
            Value::Number(n) => Ok(n),
            other => Err(invalid_type(&other, "a JSON number")),
        }
    }
}

impl<A: FromValue, B: FromValue> FromValue for (A, B) {
    fn from_value(value: Value) -> Result<Self, Error> {
        const EXPECTED: &str = "a tuple of size 2";
        let Value::Array(items) = value else {
            return Err(invalid_type(&value, EXPECTED));
        };
        let len = items.len();
        let mut items = items.into_iter();
        let a = A::from_value(
            items
                .next()
                .ok_or_else(|| Error::invalid_length(0, &EXPECTED))?,
        )?;
        let b = B::from_value(
            items
                .next()
                .ok_or_else(|| Error::invalid_length(1, &EXPECTED))?,
        )?;
        match items.next() {
            Some(_) => Err(Error::invalid_length(len, &"fewer elements in array")),
            None => Ok((a, b)),
        }
    }
}

/// An object's entries, or serde's error for anything else.
fn entries(value: Value) -> Result<Map<String, Value>, Error> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(invalid_type(&other, "a map")),
    }
}

impl FromValue for Map<String, Value> {
    fn from_value(value: Value) -> Result<Self, Error> {
        entries(value)
    }
}

// Inserted one by one: collecting a `BTreeMap` sorts a vector first, an instantiation of the
// sort per value type.
impl<T: FromValue> FromValue for BTreeMap<String, T> {
    fn from_value(value: Value) -> Result<Self, Error> {
        let mut out = BTreeMap::new();
        for (k, v) in entries(value)? {
            out.insert(k, T::from_value(v)?);
        }
        Ok(out)
    }
}

impl<T: FromValue> FromValue for crate::map::VecMap<String, T> {
    fn from_value(value: Value) -> Result<Self, Error> {
        let mut out = crate::map::VecMap::new();
        for (k, v) in entries(value)? {
            out.insert(k, T::from_value(v)?);
        }
        Ok(out)
    }
}

impl<T: FromValue> FromValue for HashMap<String, T> {
    fn from_value(value: Value) -> Result<Self, Error> {
        let mut out = HashMap::new();
        for (k, v) in entries(value)? {
            out.insert(k, T::from_value(v)?);
        }
        Ok(out)
    }
}

/// A type written as a `serde_json::Value`: the `Value` that `serde_json::to_value` built
/// from serde's `Serialize` for it (the counterpart of [`FromValue`]).
///
/// `#[derive(ToValue)]` implements it from the type's `#[serde(...)]` attributes with one
/// call to [`field`] per field, and implements serde's `Serialize` through it.
pub trait ToValue {
    /// The value as JSON.
    fn to_value(&self) -> Value;
}

/// Write a `T` as a `Value` (the counterpart of `serde_json::to_value`, which cannot fail
/// here).
pub fn to_value<T: ToValue + ?Sized>(value: &T) -> Value {
    value.to_value()
}

/// Insert `key: value` into an object being built (a derived [`ToValue`], the crate's
/// `json!`): one shared function instead of the inlined key copy, insert and drop per entry.
#[inline(never)]
pub fn put(object: &mut Map<String, Value>, key: &str, value: Value) {
    object.insert(key.to_owned(), value);
}

/// Insert `key: value` written as JSON (a derived [`ToValue`]'s field): the field's own
/// `to_value` called through its vtable, so each field is one call with no `Value` on the
/// caller's stack.
#[inline(never)]
pub fn field(object: &mut Map<String, Value>, key: &str, value: &dyn ToValue) {
    put(object, key, value.to_value());
}

/// A string `Value`: a unit variant's name, an enum written as a string.
#[inline(never)]
pub fn text(name: &str) -> Value {
    Value::String(name.to_owned())
}

/// An externally tagged variant with data: `{name: data}`.
#[inline(never)]
pub fn variant(name: &str, data: Value) -> Value {
    let mut object = Map::new();
    put(&mut object, name, data);
    Value::Object(object)
}

/// An internally tagged variant (`#[serde(tag = "…")]`) without fields or with a newtype's
/// `data`: `{tag: name}` followed by the entries of `data`'s object, as serde writes them
/// (a later entry of the same name replaces an earlier one in a `Value`). serde refuses data
/// that is not an object; here it is left out.
#[inline(never)]
pub fn tagged(tag: &str, name: &str, data: Option<Value>) -> Value {
    let mut object = Map::new();
    put(&mut object, tag, text(name));
    if let Some(data) = data {
        flatten(&mut object, data);
    }
    Value::Object(object)
}

/// An adjacently tagged variant (`#[serde(tag = "…", content = "…")]`): `{tag: name}` for a
/// unit variant, `{tag: name, content: data}` for one with data.
#[inline(never)]
pub fn adjacent(tag: &str, name: &str, content: &str, data: Option<Value>) -> Value {
    let mut object = Map::new();
    put(&mut object, tag, text(name));
    if let Some(data) = data {
        put(&mut object, content, data);
    }
    Value::Object(object)
}

/// A flattened field's entries (`#[serde(flatten)]`) added to its struct's object. serde
/// writes nothing for `None` or a unit and refuses anything but a map; here anything but an
/// object adds nothing.
#[inline(never)]
pub fn flatten(object: &mut Map<String, Value>, value: Value) {
    if let Value::Object(entries) = value {
        for (key, value) in entries {
            object.insert(key, value);
        }
    }
}

/// Implement serde's `Serialize` through [`ToValue`] (the built `Value` serialized), for a
/// type whose `ToValue` is written by hand: callers outside the crate and tests serialize it
/// with serde; nothing in the crate does, so it costs the wasm nothing.
#[macro_export]
macro_rules! serialize_via_value {
    ($($ty:ty),* $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serde::Serialize::serialize(&$crate::value::ToValue::to_value(self), s)
            }
        }
    )*};
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        text(self)
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        text(self)
    }
}

impl ToValue for std::borrow::Cow<'_, str> {
    fn to_value(&self) -> Value {
        text(self)
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

impl ToValue for () {
    fn to_value(&self) -> Value {
        Value::Null
    }
}

impl ToValue for char {
    fn to_value(&self) -> Value {
        Value::String(self.to_string())
    }
}

// Numbers as serde_json's value serializer writes them: a float that is not finite is `null`.
macro_rules! numbers {
    ($($ty:ident),*) => {$(
        impl ToValue for $ty {
            fn to_value(&self) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
numbers!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

impl ToValue for serde_json::Number {
    fn to_value(&self) -> Value {
        Value::Number(self.clone())
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue + ?Sized> ToValue for &mut T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue + ?Sized> ToValue for Box<T> {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        match self {
            Some(value) => value.to_value(),
            None => Value::Null,
        }
    }
}

impl<T: ToValue> ToValue for [T] {
    fn to_value(&self) -> Value {
        let mut items = Vec::with_capacity(self.len());
        for item in self {
            items.push(item.to_value());
        }
        Value::Array(items)
    }
}

impl<T: ToValue, const N: usize> ToValue for [T; N] {
    fn to_value(&self) -> Value {
        self.as_slice().to_value()
    }
}

impl<T: ToValue> ToValue for Vec<T> {
    fn to_value(&self) -> Value {
        self.as_slice().to_value()
    }
}

impl<T: ToValue> ToValue for std::collections::VecDeque<T> {
    fn to_value(&self) -> Value {
        Value::Array(self.iter().map(T::to_value).collect())
    }
}

impl<T: ToValue> ToValue for BTreeSet<T> {
    fn to_value(&self) -> Value {
        Value::Array(self.iter().map(T::to_value).collect())
    }
}

impl ToValue for crate::sort::StrSet {
    fn to_value(&self) -> Value {
        let mut items = Vec::with_capacity(self.len());
        for item in self {
            items.push(text(item));
        }
        Value::Array(items)
    }
}

impl<A: ToValue, B: ToValue> ToValue for (A, B) {
    fn to_value(&self) -> Value {
        Value::Array(vec![self.0.to_value(), self.1.to_value()])
    }
}

impl ToValue for Map<String, Value> {
    fn to_value(&self) -> Value {
        Value::Object(self.clone())
    }
}

impl<T: ToValue> ToValue for BTreeMap<String, T> {
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        for (key, value) in self {
            put(&mut object, key, value.to_value());
        }
        Value::Object(object)
    }
}

/// A [`crate::map::VecMap`] (a sorted vector) is the JSON object a `BTreeMap` with the same
/// entries would be: small maps kept in records use it, so each is not a B-tree type of its
/// own in the wasm.
impl<T: ToValue> ToValue for crate::map::VecMap<String, T> {
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        for (key, value) in self.iter() {
            put(&mut object, key, value.to_value());
        }
        Value::Object(object)
    }
}

impl<T: ToValue, H> ToValue for HashMap<String, T, H> {
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        for (key, value) in self {
            put(&mut object, key, value.to_value());
        }
        Value::Object(object)
    }
}

// Native only: proptest is a native dev-dependency.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod to_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    /// The same type read both ways gives the same value or the same message.
    fn same<T>(value: Value)
    where
        T: FromValue + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
    {
        let ours = T::from_value(value.clone()).map_err(|e| e.to_string());
        let serde = serde_json::from_value::<T>(value.clone()).map_err(|e| e.to_string());
        assert_eq!(ours, serde, "for {value}");
    }

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Strict {
        scene_id: String,
        #[serde(default, alias = "max_count")]
        max_count: Option<u32>,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(rename = "type", default)]
        kind: Kind,
        #[serde(skip)]
        cache: u8,
    }

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    struct Loose {
        name: String,
        count: Option<usize>,
        #[serde(default = "seven")]
        seven: i64,
        flag: bool,
        ratio: f64,
        extra: BTreeMap<String, Value>,
    }

    fn seven() -> i64 {
        7
    }

    #[derive(Debug, Default, PartialEq, Deserialize, FromValue)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        #[default]
        PlainText,
        #[serde(alias = "dlg")]
        Dialogue,
        Other(String),
        Span {
            start: u64,
        },
    }

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged {
        Stop,
        Move { to: u32 },
    }

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    #[serde(tag = "kind", content = "id", rename_all = "snake_case")]
    enum Adjacent {
        Writer,
        Agent(String),
    }

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    #[serde(untagged)]
    enum Either {
        Number(u64),
        Text(String),
    }

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    struct Wrapper(Vec<u8>);

    #[test]
    fn derived_types_read_as_serde_reads_them() {
        for v in [
            json!({"sceneId": "a"}),
            json!({"sceneId": "a", "maxCount": 3, "tags": ["x"], "type": "dialogue"}),
            json!({"sceneId": "a", "max_count": 3, "maxCount": 4}),
            json!({"sceneId": "a", "type": "dlg"}),
            json!({"sceneId": "a", "type": {"span": {"start": 2}}}),
            json!({"sceneId": "a", "type": {"span": {"start": -2}}}),
            json!({"sceneId": "a", "type": {"span": 1}}),
            json!({"sceneId": "a", "type": {"other": "x"}}),
            json!({"sceneId": "a", "type": "other"}),
            json!({"sceneId": "a", "type": "span"}),
            json!({"sceneId": "a", "type": {"a": 1, "b": 2}}),
            json!({"sceneId": "a", "type": "nope"}),
            json!({"sceneId": "a", "type": 3}),
            json!({"sceneId": "a", "type": {"plain_text": 1}}),
            json!({"sceneId": "a", "type": {"plain_text": null}}),
            json!({"sceneId": "a", "cache": 1}),
            json!({"sceneId": "a", "other": 1}),
            json!({"sceneId": 1.5}),
            // Floats in messages: serde_json's float writer, not core's (crate::decimal).
            json!({"sceneId": 1e21}),
            json!({"sceneId": 2.0}),
            json!({"sceneId": -0.0}),
            json!({"sceneId": 1.5e-7}),
            json!({"sceneId": "a", "maxCount": 1.0}),
            json!({"sceneId": "a", "maxCount": 123456789.125}),
            json!({"sceneId": null}),
            json!({"maxCount": -1}),
            json!({}),
            json!({"tags": ["x"], "maxCount": 2}),
            json!({"sceneId": "a", "maxCount": 5_000_000_000u64}),
            json!({"sceneId": "a", "tags": "x"}),
            json!({"sceneId": "a", "tags": [1]}),
            json!(["a", 2]),
            json!(["a", 2, [], "dialogue", 9]),
            json!([]),
            json!("text"),
            json!(null),
        ] {
            same::<Strict>(v);
        }
        for v in [
            json!({"name": "n", "flag": true, "ratio": 1, "extra": {}}),
            json!({"name": "n", "count": 3, "flag": true, "ratio": 0.5, "extra": {"a": [1]}}),
            json!({"name": "n", "flag": true, "ratio": "x", "extra": {}}),
            json!({"name": "n", "flag": 1, "ratio": 1, "extra": {}}),
            json!({"name": "n", "flag": true, "ratio": 1, "extra": []}),
            json!({"name": "n", "flag": true, "ratio": 1}),
            json!({"name": "n", "seven": 9, "count": 2.0, "flag": true, "ratio": 1, "extra": {}}),
            json!({"name": "n", "seven": u64::MAX, "flag": true, "ratio": 1, "extra": {}}),
            json!({"flag": true}),
            json!({}),
            json!({"ratio": 1, "extra": {}}),
            json!({"ratio": "x", "extra": {}}),
            json!(["n"]),
            json!(["n", null, 1, false, 2.5, {}]),
            json!(3),
        ] {
            same::<Loose>(v);
        }
        for v in [
            json!({"type": "stop"}),
            json!({"type": "move", "to": 3}),
            json!({"type": "move"}),
            json!({"type": "move", "to": "x"}),
            json!({"type": "jump"}),
            json!({"type": 1}),
            json!({"to": 3}),
            json!("stop"),
        ] {
            same::<Tagged>(v);
        }
        for v in [
            json!({"kind": "writer"}),
            json!({"kind": "agent", "id": "a"}),
            json!({"kind": "agent"}),
            json!({"kind": "agent", "id": 1}),
            json!({"kind": "nobody"}),
            json!({"id": "a"}),
        ] {
            same::<Adjacent>(v);
        }
        for v in [json!(1), json!("a"), json!(null), json!([1])] {
            same::<Either>(v);
        }
        for v in [json!([1, 2]), json!([256]), json!("x")] {
            same::<Wrapper>(v);
        }
    }

    /// A container default, a field's own default, a skipped field: what each absent field
    /// becomes, and the errors, as serde.
    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    #[serde(default, rename_all = "camelCase")]
    struct Defaults {
        name: String,
        #[serde(default = "seven")]
        seven: i64,
        tags: Vec<String>,
        max_count: Option<u32>,
        #[serde(skip)]
        cache: Vec<u8>,
    }

    impl Default for Defaults {
        fn default() -> Self {
            Self {
                name: "untitled".into(),
                seven: 1,
                tags: vec!["draft".into()],
                max_count: Some(9),
                cache: vec![1],
            }
        }
    }

    fn shout<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        String::deserialize(d).map(|s| s.to_uppercase())
    }

    /// A flattened field and a field read by a `with` function.
    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    struct Flat {
        id: String,
        #[serde(deserialize_with = "shout")]
        loud: String,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }

    /// serde's list of expected names with one name, and with none.
    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    #[serde(deny_unknown_fields)]
    struct One {
        only: u8,
    }

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    #[serde(deny_unknown_fields)]
    struct Empty {}

    #[derive(Debug, PartialEq, Deserialize, FromValue)]
    enum Single {
        Alone,
    }

    #[test]
    fn unknown_names_are_listed_as_serde_lists_them() {
        for v in [
            json!({"only": 1}),
            json!({"other": 1}),
            json!({"only": 1, "x": 2}),
        ] {
            same::<One>(v);
        }
        for v in [json!({}), json!({"x": 1}), json!([])] {
            same::<Empty>(v);
        }
        for v in [json!("Alone"), json!("alone"), json!({"Other": null})] {
            same::<Single>(v);
        }
    }

    #[test]
    fn defaults_flatten_and_with_read_as_serde_reads_them() {
        for v in [
            json!({}),
            json!({"name": "n"}),
            json!({"name": "n", "seven": 3, "tags": [], "maxCount": null}),
            json!({"tags": ["a", "b"], "maxCount": 2}),
            json!({"cache": [5]}),
            json!({"name": 1}),
            json!({"name": "n", "tags": [1]}),
            json!({"seven": "x"}),
            json!(["n", 2]),
            json!([]),
            json!(null),
        ] {
            same::<Defaults>(v);
        }
        for v in [
            json!({"id": "a", "loud": "quiet"}),
            json!({"id": "a", "loud": "quiet", "x": 1, "y": [true]}),
            json!({"loud": "quiet", "x": 1}),
            json!({"id": "a", "x": 1}),
            json!({"id": "a", "loud": 5}),
            json!({"id": 1, "loud": "q"}),
            // serde reads a struct with a flattened field from a map only.
            json!(["a", "quiet"]),
            json!("text"),
        ] {
            same::<Flat>(v);
        }
    }

    thread_local! {
        /// How many `Counted` values are alive.
        static LIVE: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
    }

    /// A field type that counts its live values.
    #[derive(Debug)]
    struct Counted(#[allow(dead_code)] String);

    impl Counted {
        fn new(s: String) -> Self {
            LIVE.with(|l| l.set(l.get() + 1));
            Self(s)
        }
    }

    impl Default for Counted {
        fn default() -> Self {
            Self::new("default".into())
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            LIVE.with(|l| l.set(l.get() - 1));
        }
    }

    impl FromValue for Counted {
        fn from_value(value: Value) -> Result<Self, Error> {
            String::from_value(value).map(Self::new)
        }
    }

    /// Fields read only to be dropped.
    #[derive(Debug, FromValue)]
    #[allow(dead_code)]
    struct Fields {
        a: Counted,
        b: Counted,
        n: u32,
        #[serde(skip)]
        skipped: Option<Counted>,
    }

    /// The same, starting as the struct's default.
    #[derive(Debug, Default, FromValue)]
    #[serde(default)]
    #[allow(dead_code)]
    struct DefaultFields {
        a: Counted,
        b: Counted,
        n: u32,
    }

    /// Random objects (and a few other values) of the structs' names, aliases and others,
    /// with values of every JSON kind: each struct read as serde reads it, value or message.
    #[cfg(not(target_arch = "wasm32"))]
    mod props {
        use super::*;
        use proptest::prelude::*;

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                (-3i64..300).prop_map(Value::from),
                Just(json!(u64::MAX)),
                prop_oneof![Just(1.5), Just(-0.0), Just(2.0), Just(1e21)].prop_map(Value::from),
                "[a-z]{0,3}".prop_map(Value::from),
                prop_oneof![
                    Just("dialogue"),
                    Just("dlg"),
                    Just("plain_text"),
                    Just("quiet")
                ]
                .prop_map(Value::from),
            ]
        }

        fn value() -> impl Strategy<Value = Value> {
            leaf().prop_recursive(2, 12, 3, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    proptest::collection::btree_map("[a-z]{1,2}", inner, 0..3)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        /// An object of some of `names` (each with a random value), or now and then another
        /// value (an array of values, a string, null).
        fn input(names: &'static [&'static str]) -> impl Strategy<Value = Value> {
            let object = proptest::collection::vec((0..names.len(), value()), 0..6).prop_map(
                move |entries| {
                    let map = entries.into_iter().map(|(i, v)| (names[i].to_string(), v));
                    Value::Object(map.collect())
                },
            );
            prop_oneof![
                8 => object,
                1 => proptest::collection::vec(value(), 0..6).prop_map(Value::Array),
                1 => leaf(),
            ]
        }

        proptest! {
            #[test]
            fn structs_read_as_serde_reads_them(
                strict in input(&["sceneId", "maxCount", "max_count", "tags", "type", "cache", "other"]),
                loose in input(&["name", "count", "seven", "flag", "ratio", "extra", "other"]),
                defaults in input(&["name", "seven", "tags", "maxCount", "cache", "other"]),
                flat in input(&["id", "loud", "x", "y"]),
            ) {
                same::<Strict>(strict);
                same::<Loose>(loose);
                same::<Defaults>(defaults);
                same::<Flat>(flat);
            }
        }
    }

    /// A struct is built in place, field by field: when reading fails part way, the fields
    /// already read (or the whole default) are dropped, once each.
    #[test]
    fn fields_read_before_an_error_are_dropped_once() {
        let live = || LIVE.with(|l| l.get());
        for v in [
            json!({"a": "x", "b": "y", "n": "bad"}),
            json!({"a": "x", "b": "y"}),
            json!({"a": "x", "b": 2, "n": 1}),
            json!({"n": 1, "a": "x"}),
            json!(["x", "y", -1]),
            json!(["x"]),
        ] {
            assert!(Fields::from_value(v.clone()).is_err(), "for {v}");
            assert_eq!(live(), 0, "for {v}");
            // With the struct's default, a missing field is no error.
            let read = DefaultFields::from_value(v.clone());
            let missing_only = [
                json!({"a": "x", "b": "y"}),
                json!({"n": 1, "a": "x"}),
                json!(["x"]),
            ];
            assert_eq!(read.is_err(), !missing_only.contains(&v), "for {v}");
            drop(read);
            assert_eq!(live(), 0, "for {v}");
        }
        let read = Fields::from_value(json!({"a": "x", "b": "y", "n": 1})).unwrap();
        assert_eq!(live(), 2);
        drop(read);
        let read = DefaultFields::from_value(json!({"b": "y"})).unwrap();
        assert_eq!(live(), 2);
        drop(read);
        assert_eq!(live(), 0);
    }

    #[test]
    fn a_lite_map_is_saved_and_read_as_the_json_object_of_a_btree_map() {
        #[derive(ToValue)]
        struct Lite {
            map: crate::map::VecMap<String, u64>,
        }
        #[derive(ToValue)]
        struct Tree {
            map: BTreeMap<String, u64>,
        }
        let pairs = [("b", 2), ("a", 1), ("ä", 3), ("A", 4)];
        let (mut lite, mut tree) = (crate::map::VecMap::new(), BTreeMap::new());
        for (k, v) in pairs {
            lite.insert(k.to_string(), v);
            tree.insert(k.to_string(), v);
        }
        let (lite, tree) = (Lite { map: lite }, Tree { map: tree });
        assert_eq!(
            serde_json::to_string(&lite).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        assert_eq!(
            serde_json::to_string(&lite).unwrap(),
            r#"{"map":{"A":4,"a":1,"b":2,"ä":3}}"#
        );
        let back: crate::map::VecMap<String, u64> = from_value(json!({"b": 2, "a": 1})).unwrap();
        let back: Vec<(&String, &u64)> = back.iter().collect();
        assert_eq!(back, [(&"a".to_string(), &1), (&"b".to_string(), &2)]);
        assert!(from_value::<crate::map::VecMap<String, u64>>(json!([1])).is_err());
    }
}
