//! `#[derive(FromValue)]`: draftsmith's types read from a `serde_json::Value` through a few
//! shared, non-generic helpers (`crate::value` in draftsmith) instead of a serde visitor per
//! type. The derive reads the type's `#[serde(...)]` attributes, so the same attributes
//! describe both directions:
//!
//! - containers: `rename_all` (`camelCase`, `snake_case`, `lowercase`, `kebab-case`,
//!   `SCREAMING_SNAKE_CASE`), `deny_unknown_fields`, `default`, `tag`, `tag` with `content`,
//!   `untagged`;
//! - containers also: `from` (read the other type, then convert);
//! - fields and variants: `rename`, `alias`, `default`, `default = "path"`, `skip`,
//!   `skip_deserializing`, `flatten` (one per struct), `with` and `deserialize_with` (serde's
//!   function, fed a `Value`); serialization-only attributes are ignored.
//!
//! Anything else (generic types, packed structs, other attributes) is a compile error: such a
//! type stays on serde (`serde_from_value!` in draftsmith).
//!
//! A struct with named fields is read through a static table of its fields (`value::Field`:
//! the field's offset and the functions, one per field type, that read it, fill it in when
//! absent and drop it) into the struct in place (`value::read_fields`, the crate's only
//! unsafe code, which `make test` runs under Miri). An enum's struct variant, whose fields
//! have no stable offsets, is read into locals and then built.
//!
//! `#[derive(ToValue)]` (`to_value.rs`) is the other direction: the `Value` serde's derived
//! `Serialize` gave, built through shared helpers, from the same attributes.

mod to_value;

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote, ToTokens};
use syn::{Data, DeriveInput, Fields, Ident, LitStr};

/// Derive `crate::value::FromValue` from the type's serde attributes.
#[proc_macro_derive(FromValue, attributes(serde))]
pub fn derive_from_value(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// Derive `crate::value::ToValue` (and serde's `Serialize` through it) from the type's serde
/// attributes (see `to_value.rs`).
#[proc_macro_derive(ToValue, attributes(serde))]
pub fn derive_to_value(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    match to_value::expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

fn error<T>(span: Span, message: &str) -> syn::Result<T> {
    Err(syn::Error::new(span, format!("FromValue: {message}")))
}

/// The serde attributes the derive understands.
#[derive(Default)]
struct Attrs {
    rename_all: Option<String>,
    rename: Option<String>,
    aliases: Vec<String>,
    deny_unknown: bool,
    /// `default`: `Some(None)`; `default = "path"`: `Some(Some(path))`.
    default: Option<Option<syn::Path>>,
    skip: bool,
    tag: Option<String>,
    content: Option<String>,
    untagged: bool,
    /// `from = "Type"`: read as that type, then converted.
    from: Option<syn::Type>,
    flatten: bool,
    /// `deserialize_with = "path"` or `with = "module"`: a serde function, called with the
    /// `Value` as its deserializer.
    with: Option<syn::Path>,
    /// `skip` or `skip_serializing`: left out when written (`ToValue`).
    skip_ser: bool,
    /// `skip_serializing_if = "path"`: left out when written if `path(&field)` is true.
    skip_if: Option<syn::Path>,
    /// `serialize_with = "path"` or `with = "module"` (`module::to_value`): the function
    /// `fn(&T) -> Value` that writes the field (`ToValue`).
    ser_with: Option<syn::Path>,
    /// `into = "Type"`: converted (from a clone) into that type, which is written.
    into: Option<syn::Type>,
}

fn attrs(list: &[syn::Attribute]) -> syn::Result<Attrs> {
    let mut out = Attrs::default();
    for attr in list.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let name = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let string = |meta: &syn::meta::ParseNestedMeta| -> syn::Result<String> {
                Ok(meta.value()?.parse::<LitStr>()?.value())
            };
            match name.as_str() {
                "rename_all" => out.rename_all = Some(string(&meta)?),
                "rename" => out.rename = Some(string(&meta)?),
                "alias" => out.aliases.push(string(&meta)?),
                "deny_unknown_fields" => out.deny_unknown = true,
                "default" if meta.input.peek(syn::Token![=]) => {
                    out.default = Some(Some(syn::parse_str(&string(&meta)?)?));
                }
                "default" => out.default = Some(None),
                "skip" => (out.skip, out.skip_ser) = (true, true),
                "skip_deserializing" => out.skip = true,
                "skip_serializing" => out.skip_ser = true,
                "tag" => out.tag = Some(string(&meta)?),
                "content" => out.content = Some(string(&meta)?),
                "untagged" => out.untagged = true,
                "from" => out.from = Some(syn::parse_str(&string(&meta)?)?),
                "into" => out.into = Some(syn::parse_str(&string(&meta)?)?),
                "flatten" => out.flatten = true,
                "deserialize_with" => out.with = Some(syn::parse_str(&string(&meta)?)?),
                "with" => {
                    let module: syn::Path = syn::parse_str(&string(&meta)?)?;
                    out.with = Some(syn::parse_quote!(#module::deserialize));
                    out.ser_with = Some(syn::parse_quote!(#module::to_value));
                }
                "skip_serializing_if" => out.skip_if = Some(syn::parse_str(&string(&meta)?)?),
                "serialize_with" => out.ser_with = Some(syn::parse_str(&string(&meta)?)?),
                _ => return Err(meta.error(format!("FromValue: unsupported `{name}`"))),
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// serde's `rename_all` for a field (from snake_case).
fn rename_field(rule: Option<&str>, field: &str) -> syn::Result<String> {
    let pascal = || {
        let (mut out, mut up) = (String::new(), true);
        for c in field.chars() {
            if c == '_' {
                up = true;
            } else if up {
                out.push(c.to_ascii_uppercase());
                up = false;
            } else {
                out.push(c);
            }
        }
        out
    };
    Ok(match rule {
        None | Some("snake_case") | Some("lowercase") => field.to_string(),
        Some("camelCase") => {
            let p = pascal();
            p[..1].to_ascii_lowercase() + &p[1..]
        }
        Some("PascalCase") => pascal(),
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING_SNAKE_CASE") => field.to_ascii_uppercase(),
        Some(other) => return error(Span::call_site(), &format!("unsupported rule {other}")),
    })
}

/// serde's `rename_all` for a variant (from PascalCase).
fn rename_variant(rule: Option<&str>, variant: &str) -> syn::Result<String> {
    let snake = || {
        let mut out = String::new();
        for (i, c) in variant.char_indices() {
            if i > 0 && c.is_uppercase() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    Ok(match rule {
        None | Some("PascalCase") => variant.to_string(),
        Some("snake_case") => snake(),
        Some("lowercase") => variant.to_ascii_lowercase(),
        Some("camelCase") => variant[..1].to_ascii_lowercase() + &variant[1..],
        Some("kebab-case") => snake().replace('_', "-"),
        Some("SCREAMING_SNAKE_CASE") => snake().to_ascii_uppercase(),
        Some(other) => return error(Span::call_site(), &format!("unsupported rule {other}")),
    })
}

/// A name and its aliases as serde lists them (sorted, without repeats).
fn accepted(name: &str, aliases: &[String]) -> Vec<String> {
    let mut all: Vec<String> = aliases.to_vec();
    all.push(name.to_string());
    all.sort();
    all.dedup();
    all
}

/// A named field's identifier and serde attributes (container-only ones refused).
fn named_field(field: &syn::Field) -> syn::Result<(&Ident, Attrs)> {
    let Some(ident) = &field.ident else {
        return error(Span::call_site(), "unnamed field");
    };
    let attrs = attrs(&field.attrs)?;
    if attrs.tag.is_some() || attrs.untagged || attrs.rename_all.is_some() {
        return error(ident.span(), "unsupported field attribute");
    }
    Ok((ident, attrs))
}

/// A `crate::value::Struct` being declared: its fields' names and flags, in order.
#[derive(Default)]
struct Shape {
    /// Every accepted name, per field (its name and aliases, sorted).
    names: Vec<String>,
    /// The field each of `names` belongs to.
    owners: Vec<u8>,
    /// Each field's own name.
    main: Vec<String>,
    /// Whether each field has a default.
    defaults: Vec<bool>,
    /// Whether each field is required (an expression: an `Option`'s is not).
    required: Vec<Tokens>,
}

impl Shape {
    /// Add named field number `index`: its serde name (its `rename`, or its identifier under
    /// `rename_all`) and aliases, whether it has a default (its own or the container's), and
    /// whether it is `required`.
    fn add(
        &mut self,
        ident: &Ident,
        attrs: &Attrs,
        container: &Attrs,
        index: u8,
        required: Tokens,
    ) -> syn::Result<()> {
        let raw = ident.to_string();
        let name = match &attrs.rename {
            Some(name) => name.clone(),
            None => rename_field(
                container.rename_all.as_deref(),
                raw.trim_start_matches("r#"),
            )?,
        };
        for n in accepted(&name, &attrs.aliases) {
            self.names.push(n);
            self.owners.push(index);
        }
        self.main.push(name);
        self.defaults
            .push(attrs.default.is_some() || container.default.is_some());
        self.required.push(required);
        Ok(())
    }

    /// The `static SHAPE` declaring it.
    fn declare(&self, expecting: &str, container: &Attrs, flatten: bool) -> Tokens {
        let Shape {
            names,
            owners,
            main,
            defaults,
            required,
        } = self;
        let deny = container.deny_unknown;
        quote! {
            static SHAPE: crate::value::Struct = crate::value::Struct {
                expecting: #expecting,
                names: &[#(#names),*],
                owners: &[#(#owners),*],
                fields: &[#(#main),*],
                defaults: &[#(#defaults),*],
                required: &[#(#required),*],
                deny_unknown: #deny,
                flatten: #flatten,
            };
        }
    }
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    if !input.generics.params.is_empty() {
        return error(input.ident.span(), "generic types are not supported");
    }
    let ident = &input.ident;
    let container = attrs(&input.attrs)?;
    if let Some(from) = &container.from {
        return Ok(quote! {
            impl crate::value::FromValue for #ident {
                fn from_value(value: serde_json::Value) -> ::core::result::Result<Self, crate::value::Error> {
                    <#from as crate::value::FromValue>::from_value(value).map(::core::convert::From::from)
                }
            }
        });
    }
    if container.flatten {
        return error(ident.span(), "flatten on a container");
    }
    let body = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(_) => {
                // Fields are written in place through aligned pointers: not in a packed struct.
                if input.attrs.iter().any(|a| {
                    a.path().is_ident("repr")
                        && a.meta.to_token_stream().to_string().contains("packed")
                }) {
                    return error(ident.span(), "packed structs are not supported");
                }
                let shape = format!("struct {ident}");
                table(ident, &data.fields, &container, &shape)?
            }
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                quote! { crate::value::FromValue::from_value(value).map(Self) }
            }
            _ => return error(ident.span(), "only structs with named fields or newtypes"),
        },
        Data::Enum(data) => enumeration(ident, data, &container)?,
        Data::Union(_) => return error(ident.span(), "unions are not supported"),
    };
    Ok(quote! {
        impl crate::value::FromValue for #ident {
            // A field's slot is forgotten whatever its type (see `named`).
            #[allow(clippy::forget_non_drop)]
            fn from_value(value: serde_json::Value) -> ::core::result::Result<Self, crate::value::Error> {
                #body
            }
        }
    })
}

/// The body that reads a struct with named fields through `crate::value::read_fields`: a
/// table of its fields (offset, and the shared functions that read, fill in and drop a field
/// of each type) instead of code per field. Each field is written in place into the struct
/// being built, so nothing is moved when it is done. (Struct variants of enums, whose fields
/// have no stable offsets, are read by [`named`].)
fn table(
    ident: &Ident,
    fields: &Fields,
    container: &Attrs,
    expecting: &str,
) -> syn::Result<Tokens> {
    let mut shape = Shape::default();
    // Named fields first (their index is their place in `names`' owners), then the
    // flattened field, then the skipped ones.
    let (mut read, mut extra, mut skipped) = (vec![], vec![], vec![]);
    let assign = container.default.is_some();
    let mut index = 0u8;
    for field in fields {
        let (field_ident, attrs) = named_field(field)?;
        let ty = &field.ty;
        if mentions_self(quote!(#ty)) {
            return error(field_ident.span(), "a field's type may not name `Self`");
        }
        let offset = quote! { ::core::mem::offset_of!(#ident, #field_ident) };
        let drop = quote! { crate::value::drop_at::<#ty> };
        // Write into the uninitialised field, or (with a container default, where the struct
        // starts as its default) assign, dropping the default.
        let (write_read, write_default) = if assign {
            (
                quote! { crate::value::assign_at::<#ty> },
                quote! { crate::value::assign_default::<#ty> },
            )
        } else {
            (
                quote! { crate::value::write_at::<#ty> },
                quote! { crate::value::write_default::<#ty> },
            )
        };
        if attrs.skip {
            // As serde: a skipped field is its type's default, or the struct's default's.
            let absent = if assign {
                quote! { crate::value::keep }
            } else {
                write_default.clone()
            };
            skipped.push(quote! {
                crate::value::Field { offset: #offset, read: crate::value::unread, absent: #absent, drop: #drop }
            });
            continue;
        }
        if attrs.flatten {
            if !extra.is_empty() {
                return error(field_ident.span(), "more than one flattened field");
            }
            extra.push(quote! {
                crate::value::Field { offset: #offset, read: #write_read, absent: crate::value::keep, drop: #drop }
            });
            continue;
        }
        // The statement that puts `value` into the field at `p`: assigned over the default,
        // or written into the uninitialised field.
        let store = |value: Tokens| {
            if assign {
                quote! { *p.cast::<#ty>() = #value; }
            } else {
                quote! { p.cast::<#ty>().write(#value); }
            }
        };
        let reader = match &attrs.with {
            Some(function) => {
                let store = store(quote! { value });
                quote! {{
                    unsafe fn read(v: &mut serde_json::Value, p: *mut u8) -> ::core::result::Result<(), crate::value::Error> {
                        let value: #ty = #function(::core::mem::take(v))?;
                        // SAFETY: as `crate::value::write_at`.
                        unsafe { #store }
                        ::core::result::Result::Ok(())
                    }
                    read
                }}
            }
            None => write_read.clone(),
        };
        // What an absent field becomes: its default, `None` for an `Option`, or (with a
        // container default) what the struct's default has. A required field's absence is
        // an error `read_fields` reports before.
        let (absent, required) = match (&attrs.default, &container.default) {
            (Some(Some(function)), _) => {
                let store = store(quote! { #function() });
                (
                    quote! {{
                        unsafe fn absent(p: *mut u8) {
                            // SAFETY: as `crate::value::write_default`.
                            unsafe { #store }
                        }
                        absent
                    }},
                    quote! { false },
                )
            }
            (Some(None), _) => (write_default.clone(), quote! { false }),
            (None, Some(_)) => (quote! { crate::value::keep }, quote! { false }),
            (None, None) if attrs.with.is_some() => {
                (quote! { crate::value::never }, quote! { true })
            }
            (None, None) => (
                quote! { crate::value::write_absent::<#ty> },
                quote! { !<#ty as crate::value::FromValue>::OPTIONAL },
            ),
        };
        shape.add(field_ident, &attrs, container, index, required)?;
        read.push(quote! {
            crate::value::Field { offset: #offset, read: #reader, absent: #absent, drop: #drop }
        });
        index = index
            .checked_add(1)
            .ok_or_else(|| syn::Error::new(field_ident.span(), "FromValue: too many fields"))?;
    }
    let shape = shape.declare(expecting, container, !extra.is_empty());
    let init = match &container.default {
        None => quote! { ::core::option::Option::None },
        Some(function) => {
            let function = match function {
                Some(function) => quote! { #function },
                None => quote! { <#ident as ::core::default::Default>::default },
            };
            quote! {{
                unsafe fn init(p: *mut u8) {
                    // SAFETY: `p` is the struct being built, aligned and uninitialised.
                    unsafe { p.cast::<#ident>().write(#function()) }
                }
                ::core::option::Option::Some((init, crate::value::drop_at::<#ident>))
            }}
        }
    };
    let count = read.len() + extra.len() + skipped.len();
    Ok(quote! {
        #shape
        static FIELDS: [crate::value::Field; #count] = [#(#read,)* #(#extra,)* #(#skipped,)*];
        static LAYOUT: crate::value::Layout = crate::value::Layout {
            fields: &FIELDS,
            init: #init,
        };
        let mut out = ::core::mem::MaybeUninit::<#ident>::uninit();
        // SAFETY: `LAYOUT` describes this struct's fields (their offsets and types); when
        // `read_fields` succeeds, it has initialised each of them.
        unsafe {
            crate::value::read_fields(value, &SHAPE, &LAYOUT, out.as_mut_ptr().cast())?;
            ::core::result::Result::Ok(out.assume_init())
        }
    })
}

/// Whether tokens name `Self` (which a table's statics cannot).
fn mentions_self(tokens: Tokens) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == "Self",
        proc_macro2::TokenTree::Group(g) => mentions_self(g.stream()),
        _ => false,
    })
}

/// The statements that read named fields from `value` into locals, and the expression that
/// builds `path { … }` from them.
fn named(
    fields: &Fields,
    container: &Attrs,
    expecting: &str,
    path: Tokens,
) -> syn::Result<(Tokens, Tokens)> {
    let mut shape = Shape::default();
    let (mut locals, mut arms, mut inits) = (vec![], vec![], vec![]);
    let mut index = 0u8;
    let mut flatten = false;
    for field in fields {
        let (ident, attrs) = named_field(field)?;
        let ty = &field.ty;
        if attrs.skip {
            inits.push(quote! { #ident: ::core::default::Default::default() });
            continue;
        }
        if attrs.flatten {
            if flatten {
                return error(ident.span(), "more than one flattened field");
            }
            flatten = true;
            inits.push(quote! {
                #ident: <#ty as crate::value::FromValue>::from_value(serde_json::Value::Object(__rest))?
            });
            continue;
        }
        let local = format_ident!("__f{}", index);
        let i = usize::from(index);
        locals.push(
            quote! { let mut #local: ::core::option::Option<#ty> = ::core::option::Option::None; },
        );
        // `read_struct` hands each field over once (a repeated name is an error), so the slot
        // is empty: forgetting the `None` it held spares the drop code of each field's type.
        // A field read by its type goes through `crate::value::slot`, one copy per field type
        // (not per field) in the wasm.
        arms.push(match &attrs.with {
            Some(function) => quote! {
                #i => ::core::mem::forget(::core::option::Option::replace(
                    &mut #local,
                    #function(::core::mem::take(v))?,
                )),
            },
            None => quote! { #i => crate::value::slot(&mut #local, v)?, },
        });
        // An absent field without a default is an error that `read_struct` reports (after the
        // walk, in the fields' order, as serde does), except for an `Option`, which is `None`:
        // so here it is `None` or cannot happen, and building the value has no error paths.
        let (missing, required) = match (&attrs.default, &container.default) {
            (Some(Some(function)), _) => (quote! { #function() }, quote! { false }),
            (Some(None), _) => (
                quote! { ::core::default::Default::default() },
                quote! { false },
            ),
            (None, Some(_)) => (quote! { __default.#ident }, quote! { false }),
            (None, None) if attrs.with.is_some() => {
                (quote! { crate::value::never_absent() }, quote! { true })
            }
            (None, None) => (
                quote! { crate::value::absent::<#ty>() },
                quote! { !<#ty as crate::value::FromValue>::OPTIONAL },
            ),
        };
        shape.add(ident, &attrs, container, index, required)?;
        inits.push(quote! {
            #ident: match #local {
                ::core::option::Option::Some(v) => v,
                ::core::option::Option::None => #missing,
            }
        });
        index = index
            .checked_add(1)
            .ok_or_else(|| syn::Error::new(ident.span(), "FromValue: too many fields"))?;
    }
    let shape = shape.declare(expecting, container, flatten);
    let default = match &container.default {
        Some(None) => quote! { let __default: Self = ::core::default::Default::default(); },
        Some(Some(function)) => quote! { let __default: Self = #function(); },
        None => quote! {},
    };
    let read = quote! {
        #shape
        #(#locals)*
        #[allow(unused_variables)]
        let __rest = crate::value::read_struct(value, &SHAPE, &mut |i, v| {
            match i {
                #(#arms)*
                _ => {}
            }
            ::core::result::Result::Ok(())
        })?;
        #default
    };
    let build = quote! { ::core::result::Result::Ok(#path { #(#inits),* }) };
    Ok((read, build))
}

enum Tagging {
    External,
    Internal(String),
    Adjacent(String, String),
    Untagged,
}

fn enumeration(ident: &Ident, data: &syn::DataEnum, container: &Attrs) -> syn::Result<Tokens> {
    let tagging = match (&container.tag, &container.content, container.untagged) {
        (None, None, false) => Tagging::External,
        (Some(tag), None, false) => Tagging::Internal(tag.clone()),
        (Some(tag), Some(content), false) => Tagging::Adjacent(tag.clone(), content.clone()),
        (None, None, true) => Tagging::Untagged,
        _ => return error(ident.span(), "unsupported enum representation"),
    };
    if container.deny_unknown || container.default.is_some() {
        return error(ident.span(), "unsupported enum attribute");
    }
    let rule = container.rename_all.as_deref();
    let (mut names, mut owners, mut arms) = (vec![], vec![], vec![]);
    let mut untagged = vec![];
    let mut index = 0u8;
    for variant in &data.variants {
        let attrs = attrs(&variant.attrs)?;
        if attrs.skip || attrs.default.is_some() || attrs.tag.is_some() {
            return error(variant.ident.span(), "unsupported variant attribute");
        }
        let v = &variant.ident;
        let name = match &attrs.rename {
            Some(name) => name.clone(),
            None => rename_variant(rule, &v.to_string())?,
        };
        let expecting = format!("struct variant {ident}::{v}");
        // How the variant is built from its data `d` (a Value).
        let build = match &variant.fields {
            Fields::Unit => None,
            Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                Some(quote! { crate::value::FromValue::from_value(d).map(Self::#v) })
            }
            Fields::Named(_) => {
                let (read, build) = named(&variant.fields, &attrs, &expecting, quote!(Self::#v))?;
                Some(quote! {{ let value = d; #read #build }})
            }
            Fields::Unnamed(_) => return error(v.span(), "tuple variants are not supported"),
        };
        let body = match (&tagging, build) {
            (Tagging::External, None) => {
                quote! {{ crate::value::unit_variant(d)?; ::core::result::Result::Ok(Self::#v) }}
            }
            (Tagging::External, Some(build)) => {
                let what = match &variant.fields {
                    Fields::Named(_) => "struct variant",
                    _ => "newtype variant",
                };
                quote! {{ let d = crate::value::variant_data(d, #what)?; #build }}
            }
            (Tagging::Internal(_) | Tagging::Adjacent(..), None) => {
                quote! {{ let _ = d; ::core::result::Result::Ok(Self::#v) }}
            }
            (Tagging::Internal(_), Some(build)) => build,
            (Tagging::Adjacent(_, content), Some(build)) => {
                quote! {{ let d = crate::value::adjacent_data(d, #content)?; #build }}
            }
            (Tagging::Untagged, None) => {
                untagged.push(quote! {
                    if crate::value::unit(value.clone()).is_ok() {
                        return ::core::result::Result::Ok(Self::#v);
                    }
                });
                quote! {}
            }
            (Tagging::Untagged, Some(build)) => {
                untagged.push(quote! {
                    let built = (|d: serde_json::Value| -> ::core::result::Result<Self, crate::value::Error> {
                        #build
                    })(value.clone());
                    if let ::core::result::Result::Ok(built) = built {
                        return ::core::result::Result::Ok(built);
                    }
                });
                quote! {}
            }
        };
        arms.push(body);
        for n in accepted(&name, &attrs.aliases) {
            names.push(n);
            owners.push(index);
        }
        index = index
            .checked_add(1)
            .ok_or_else(|| syn::Error::new(v.span(), "FromValue: too many variants"))?;
    }
    let expecting = match &tagging {
        Tagging::External => format!("enum {ident}"),
        Tagging::Internal(_) => format!("internally tagged enum {ident}"),
        Tagging::Adjacent(..) => format!("adjacently tagged enum {ident}"),
        Tagging::Untagged => {
            let name = ident.to_string();
            return Ok(quote! {
                #(#untagged)*
                ::core::result::Result::Err(crate::value::no_variant(#name))
            });
        }
    };
    let pick = match &tagging {
        Tagging::Internal(tag) => quote! { crate::value::read_tagged(value, #tag, &VARIANTS)? },
        Tagging::Adjacent(tag, content) => {
            quote! { crate::value::read_adjacent(value, #tag, #content, &VARIANTS)? }
        }
        _ => quote! { crate::value::read_variant(value, &VARIANTS)? },
    };
    // The last arm catches every index (the helpers only return declared ones).
    let last = arms.pop();
    let indices = (0..arms.len()).map(|i| quote! { #i });
    Ok(quote! {
        static VARIANTS: crate::value::Variants = crate::value::Variants {
            expecting: #expecting,
            names: &[#(#names),*],
            owners: &[#(#owners),*],
        };
        let (i, d) = #pick;
        match i {
            #(#indices => #arms)*
            _ => #last
        }
    })
}
