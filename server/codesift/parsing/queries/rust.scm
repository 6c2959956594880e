; Rust. Qualified names use `::` and only enclosing items (`Point::new`,
; `inner::helper`): there is no crate prefix.

; Items.
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.union
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant

; `impl Type` and `impl Trait for Type` qualify their functions with the type.
(impl_item
  type: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ]) @scope

; Supertraits: `trait Shape: Clone + fmt::Debug`.
(trait_item
  bounds: (trait_bounds [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ] @reference.inherits))

; `impl Trait for Type`: Type implements Trait. An impl block is a scope, not a
; node, so the extractor currently drops this (no enclosing definition); kept so
; that it works once scopes can own inherits edges.
(impl_item
  trait: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ] @reference.inherits)

; Calls: f(), x.m(), Type::new(), path::f(), and turbofish forms. Enum
; constructors that read as calls everywhere (Some, Ok, Err) are skipped
; (`#not-any-of?` is silently ignored by py-tree-sitter 0.26; `#not-match?` works).
((call_expression function: (identifier) @name) @reference.call
  (#not-match? @name "^(Some|Ok|Err)$"))
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function
    function: [
      (identifier) @name
      (field_expression field: (field_identifier) @name)
      (scoped_identifier name: (identifier) @name)
    ])) @reference.call

; Imports.
; use std::collections::HashMap;
(use_declaration
  argument: (scoped_identifier path: (_) @import.module name: (identifier) @import.name)) @import
; use serde;
(use_declaration argument: (identifier) @import.module) @import
; use a::b as c;  use a as c;
(use_declaration
  argument: (use_as_clause
    path: (scoped_identifier path: (_) @import.module name: (identifier) @import.name)
    alias: (identifier) @import.alias)) @import
(use_declaration
  argument: (use_as_clause path: (identifier) @import.module alias: (identifier) @import.alias)) @import
; use std::io::{self, Read, fmt::Write as W};
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list [(identifier) (scoped_identifier)] @import.name))) @import
(use_declaration
  argument: (scoped_use_list path: (_) @import.module list: (use_list (self)))) @import
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      (use_as_clause path: (_) @import.name alias: (identifier) @import.alias)))) @import
; use crate::prelude::*;
(use_declaration argument: (use_wildcard [(identifier) (scoped_identifier)] @import.module)) @import
; extern crate alloc;
(extern_crate_declaration name: (identifier) @import.module) @import
