//! A story-bible entity as the page reads it, flat: `kind`, `id`, `version`, then each field
//! of its kind (`null` when unset) with its `<field>_origin` beside it ([`FlatEntity`]).
//!
//! Its TypeScript declaration is written from the kinds' field table ([`Kind::fields`]), so
//! it is as precise as the table: `BibleEntity<'character'>` has exactly a character's
//! fields. The table is the one declaration of the fields; nothing here repeats it.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use ts_rs::{Config, TypeVisitor, TS};

use super::{Entity, FieldType, Kind};

/// An entity, flat ([`Entity::flat`]). In TypeScript: `BibleEntity<K>`, one kind's fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct FlatEntity(Value);

impl FlatEntity {
    /// `entity`, flat.
    pub fn of(entity: &Entity) -> Self {
        Self(entity.flat())
    }
}

impl TS for FlatEntity {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn ident(_: &Config) -> String {
        "BibleEntity".into()
    }

    fn name(_: &Config) -> String {
        "BibleEntity".into()
    }

    fn inline(cfg: &Config) -> String {
        Self::name(cfg)
    }

    fn decl(cfg: &Config) -> String {
        Self::decl_concrete(cfg)
    }

    fn decl_concrete(_: &Config) -> String {
        "type BibleEntity<K extends BibleKind = BibleKind> = K extends BibleKind\n  \
         ? { kind: K, id: string, version: number } & BibleFields[K] & \
         { [F in keyof BibleFields[K] as `${F & string}_origin`]: FieldOrigin | null }\n  \
         : never;"
            .into()
    }

    fn visit_dependencies(v: &mut impl TypeVisitor) {
        v.visit::<Kind>();
        v.visit::<BibleFields>();
        v.visit::<FieldOrigin>();
    }

    fn output_path() -> Option<PathBuf> {
        Some(PathBuf::from("BibleEntity.ts"))
    }
}

/// The fields of each kind, as TypeScript (`BibleFields`): written from [`Kind::fields`].
pub struct BibleFields;

impl TS for BibleFields {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn name(_: &Config) -> String {
        "BibleFields".into()
    }

    fn inline(cfg: &Config) -> String {
        Self::name(cfg)
    }

    fn decl(cfg: &Config) -> String {
        Self::decl_concrete(cfg)
    }

    fn decl_concrete(_: &Config) -> String {
        let mut text = String::from("type BibleFields = {\n");
        for kind in Kind::ALL {
            let fields: Vec<String> = kind
                .fields()
                .iter()
                .map(|f| format!("{}: {} | null", f.name, ts_type(f.ty)))
                .collect();
            text.push_str(&format!(
                "  {}: {{ {} }},\n",
                kind.name(),
                fields.join(", ")
            ));
        }
        text.push_str("};");
        text
    }

    fn output_path() -> Option<PathBuf> {
        Some(PathBuf::from("BibleFields.ts"))
    }
}

/// A field value's TypeScript type.
fn ts_type(ty: FieldType) -> &'static str {
    match ty {
        FieldType::Text => "string",
        FieldType::TextList => "Array<string>",
        FieldType::Int => "number",
        FieldType::Span => "{ start: number, end: number }",
    }
}

/// Who wrote a field, as TypeScript (`FieldOrigin`): what [`super::Actor::origin`] writes.
pub struct FieldOrigin;

impl TS for FieldOrigin {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn name(_: &Config) -> String {
        "FieldOrigin".into()
    }

    fn inline(cfg: &Config) -> String {
        Self::name(cfg)
    }

    fn decl(cfg: &Config) -> String {
        Self::decl_concrete(cfg)
    }

    fn decl_concrete(_: &Config) -> String {
        "type FieldOrigin = 'human' | 'import' | `agent:${string}`;".into()
    }

    fn output_path() -> Option<PathBuf> {
        Some(PathBuf::from("FieldOrigin.ts"))
    }
}
