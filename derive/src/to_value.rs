//! `#[derive(ToValue)]`: a type written as a `serde_json::Value` through a few shared,
//! non-generic helpers (`crate::value` in draftsmith) instead of serde's `Serialize` into
//! serde_json's value serializer. The derive reads the type's `#[serde(...)]` attributes and
//! builds the `Value` that `serde_json::to_value` built from serde's derived `Serialize`:
//!
//! - containers: `rename_all`, `tag`, `tag` with `content`, `untagged`, `into` (a clone
//!   converted, then written);
//! - fields and variants: `rename`, `skip`, `skip_serializing`, `skip_serializing_if`,
//!   `flatten` (its object's entries join the struct's), `serialize_with = "path"` and
//!   `with = "module"` (`module::to_value`), both naming a function `fn(&T) -> Value`, as
//!   serde's would have written the field; deserialization-only attributes are ignored.
//!
//! Each field is one call to `value::field` with the field's own `ToValue`. The derive also
//! implements serde's `Serialize` by serializing the built `Value`, for callers that use serde
//! (tests, code outside the crate): nothing in the crate calls it, so it costs the wasm
//! nothing. An object of a `Value` lists its keys sorted, so `serde_json::to_string` of such a
//! type writes the fields in that order, not in declaration order as serde's derive did.

use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields};

use crate::{attrs, error, rename_field, rename_variant, Attrs};

/// The `ToValue` and `Serialize` impls of `input`.
pub(crate) fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    if !input.generics.params.is_empty() {
        return error(input.ident.span(), "generic types are not supported");
    }
    let ident = &input.ident;
    let container = attrs(&input.attrs)?;
    if container.flatten || container.skip_ser || container.ser_with.is_some() {
        return error(ident.span(), "unsupported container attribute");
    }
    let body = if let Some(into) = &container.into {
        quote! {
            crate::value::ToValue::to_value(
                &<#into as ::core::convert::From<Self>>::from(::core::clone::Clone::clone(self)),
            )
        }
    } else {
        match &input.data {
            Data::Struct(data) => {
                if container.tag.is_some() || container.untagged {
                    return error(ident.span(), "tag or untagged on a struct");
                }
                match &data.fields {
                    Fields::Named(fields) => {
                        let access = fields
                            .named
                            .iter()
                            .map(|f| {
                                let i = &f.ident;
                                quote! { &self.#i }
                            })
                            .collect::<Vec<_>>();
                        object(&data.fields, &access, &container, None)?
                    }
                    Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                        let field = &fields.unnamed[0];
                        field_value(&attrs(&field.attrs)?, quote! { &self.0 })
                    }
                    Fields::Unit => quote! { serde_json::Value::Null },
                    Fields::Unnamed(_) => {
                        return error(ident.span(), "only structs with named fields or newtypes")
                    }
                }
            }
            Data::Enum(data) => enumeration(data, &container)?,
            Data::Union(_) => return error(ident.span(), "unions are not supported"),
        }
    };
    Ok(quote! {
        impl crate::value::ToValue for #ident {
            fn to_value(&self) -> serde_json::Value {
                #body
            }
        }

        impl ::serde::Serialize for #ident {
            fn serialize<__S: ::serde::Serializer>(
                &self,
                serializer: __S,
            ) -> ::core::result::Result<__S::Ok, __S::Error> {
                ::serde::Serialize::serialize(&crate::value::ToValue::to_value(self), serializer)
            }
        }
    })
}

/// A field's value: its own `ToValue`, or its `serialize_with` function.
fn field_value(attrs: &Attrs, access: Tokens) -> Tokens {
    match &attrs.ser_with {
        Some(function) => quote! { #function(#access) },
        None => quote! { crate::value::ToValue::to_value(#access) },
    }
}

/// The object of named `fields`, each read through its `access` expression (a reference);
/// `tag`: the entry written first (an internally tagged variant's tag and name).
fn object(
    fields: &Fields,
    access: &[Tokens],
    container: &Attrs,
    tag: Option<(&str, &str)>,
) -> syn::Result<Tokens> {
    let rule = container.rename_all.as_deref();
    let mut puts = vec![];
    if let Some((tag, name)) = tag {
        puts.push(quote! { crate::value::put(&mut map, #tag, crate::value::text(#name)); });
    }
    for (field, access) in fields.iter().zip(access) {
        let Some(ident) = &field.ident else {
            return error(Span::call_site(), "unnamed field");
        };
        let attrs = attrs(&field.attrs)?;
        if attrs.tag.is_some()
            || attrs.untagged
            || attrs.rename_all.is_some()
            || attrs.into.is_some()
        {
            return error(ident.span(), "unsupported field attribute");
        }
        if attrs.skip_ser {
            continue;
        }
        let value = field_value(&attrs, access.clone());
        let put = if attrs.flatten {
            quote! { crate::value::flatten(&mut map, #value); }
        } else {
            let raw = ident.to_string();
            let raw = raw.trim_start_matches("r#");
            let name = match &attrs.rename {
                Some(name) => name.clone(),
                None => rename_field(rule, raw)?,
            };
            match &attrs.ser_with {
                Some(_) => quote! { crate::value::put(&mut map, #name, #value); },
                None => quote! { crate::value::field(&mut map, #name, #access); },
            }
        };
        puts.push(match &attrs.skip_if {
            Some(function) => quote! { if !#function(#access) { #put } },
            None => put,
        });
    }
    Ok(quote! {{
        let mut map = serde_json::Map::new();
        #(#puts)*
        serde_json::Value::Object(map)
    }})
}

fn enumeration(data: &syn::DataEnum, container: &Attrs) -> syn::Result<Tokens> {
    let rule = container.rename_all.as_deref();
    let tagging = (&container.tag, &container.content, container.untagged);
    if !matches!(tagging, (None, None, _) | (Some(_), _, false)) {
        return error(Span::call_site(), "unsupported enum representation");
    }
    let mut arms = vec![];
    let mut names = vec![];
    let mut unit_only = true;
    for variant in &data.variants {
        let own = attrs(&variant.attrs)?;
        let v = &variant.ident;
        if own.skip_ser || own.skip_if.is_some() || own.ser_with.is_some() {
            return error(v.span(), "unsupported variant attribute");
        }
        let name = match &own.rename {
            Some(name) => name.clone(),
            None => rename_variant(rule, &v.to_string())?,
        };
        names.push(name.clone());
        let (pattern, data) = match &variant.fields {
            Fields::Unit => (quote! { Self::#v }, None),
            Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                unit_only = false;
                let value = field_value(&attrs(&f.unnamed[0].attrs)?, quote! { __0 });
                (quote! { Self::#v(__0) }, Some((value, false)))
            }
            Fields::Named(f) => {
                unit_only = false;
                let binds: Vec<_> = (0..f.named.len())
                    .map(|i| format_ident!("__{}", i))
                    .collect();
                let idents = f.named.iter().map(|f| &f.ident);
                let pattern = quote! { Self::#v { #(#idents: #binds),* } };
                let access: Vec<Tokens> = binds.iter().map(|b| quote! { #b }).collect();
                let tag = match tagging {
                    (Some(tag), None, false) => Some((tag.as_str(), name.as_str())),
                    _ => None,
                };
                (
                    pattern,
                    Some((object(&variant.fields, &access, &own, tag)?, true)),
                )
            }
            Fields::Unnamed(_) => return error(v.span(), "tuple variants are not supported"),
        };
        let body = match (tagging, data) {
            ((None, None, false), None) => quote! { crate::value::text(#name) },
            ((None, None, false), Some((data, _))) => {
                quote! { crate::value::variant(#name, #data) }
            }
            ((Some(tag), None, false), None) => quote! { crate::value::tagged(#tag, #name, None) },
            // A struct variant's object already starts with the tag.
            ((Some(_), None, false), Some((data, true))) => data,
            ((Some(tag), None, false), Some((data, false))) => {
                quote! { crate::value::tagged(#tag, #name, Some(#data)) }
            }
            ((Some(tag), Some(content), false), None) => {
                quote! { crate::value::adjacent(#tag, #name, #content, None) }
            }
            ((Some(tag), Some(content), false), Some((data, _))) => {
                quote! { crate::value::adjacent(#tag, #name, #content, Some(#data)) }
            }
            ((None, None, true), None) => quote! { serde_json::Value::Null },
            ((None, None, true), Some((data, _))) => data,
            _ => return error(v.span(), "unsupported enum representation"),
        };
        arms.push(quote! { #pattern => #body, });
    }
    if data.variants.is_empty() {
        return Ok(quote! { match *self {} });
    }
    // An enum of unit variants written as strings: one call, its name picked by the match.
    if unit_only && tagging == (&None, &None, false) {
        let patterns = data.variants.iter().map(|v| {
            let v = &v.ident;
            quote! { Self::#v }
        });
        return Ok(quote! {
            crate::value::text(match self { #(#patterns => #names,)* })
        });
    }
    Ok(quote! {
        match self {
            #(#arms)*
        }
    })
}
