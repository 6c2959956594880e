; TypeScript. (tsx.scm is this file plus the JSX patterns at its end.)
; Definitions are captured as the declaration itself; the extractor climbs
; `export_statement` / `ambient_declaration` to find a leading JSDoc comment.

; Functions, classes, interfaces, enums, type aliases.
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
; Overload signatures and `declare function` (.d.ts files).
(function_signature name: (identifier) @name) @definition.function
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type

; namespace A.B { }  /  module M { }  /  declare module 'pkg' { }
; A statement-level namespace sits in an expression_statement: capture that so
; the comment above it is its doc (the wider match wins).
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace
(expression_statement
  (internal_module name: [(identifier) (nested_identifier)] @name)) @definition.namespace
(module name: [(identifier) (nested_identifier)] @name) @definition.namespace
(module name: (string (string_fragment) @name)) @definition.namespace

; const f = () => ..., let g = function () {...}, var h = function* () {...}
; The whole declaration is the node so a comment above `const` is its doc.
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(lexical_declaration
  (variable_declarator name: (identifier) @name value: (class))) @definition.class

; module.exports = class Application {...}: a named class expression assigned to
; an export is that class; exports.Manager = class {...}: an anonymous one is
; named by the property.
(expression_statement
  (assignment_expression
    left: (member_expression)
    right: (class name: (type_identifier) @name))) @definition.class
(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name)
    right: (class !name))) @definition.class
; ... also at the end of a chain: exports = module.exports = internals.Auth = class {...}
(expression_statement
  (assignment_expression
    right: (assignment_expression
      left: (member_expression property: (property_identifier) @name)
      right: (class !name)))) @definition.class
(expression_statement
  (assignment_expression
    right: (assignment_expression
      right: (assignment_expression
        left: (member_expression property: (property_identifier) @name)
        right: (class !name))))) @definition.class

; exports.f = function () {...}, Foo.prototype.bar = () => {...}
(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)])) @definition.function

; Class and interface members; method_definition also covers object-literal
; shorthand methods (`{ m() {} }`), which are methods of that object.
((method_definition name: (property_identifier) @name) @definition.constructor
  (#eq? @name "constructor"))
((method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method
  (#not-eq? @name "constructor"))
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method
; Signatures in interfaces and `declare class` bodies (not in inline object types).
(interface_body
  (method_signature name: (property_identifier) @name) @definition.method)
(class_body
  (method_signature name: (property_identifier) @name) @definition.method)
(abstract_method_signature name: (property_identifier) @name) @definition.method

; Inheritance: extends / implements / interface extends.
(extends_clause
  value: [(identifier) @name
          (member_expression property: (property_identifier) @name)]) @reference.inherits
(implements_clause
  [(type_identifier) @name
   (nested_type_identifier name: (type_identifier) @name)
   (generic_type name: [(type_identifier) @name
                        (nested_type_identifier name: (type_identifier) @name)])]) @reference.inherits
(extends_type_clause
  type: [(type_identifier) @name
         (nested_type_identifier name: (type_identifier) @name)
         (generic_type name: [(type_identifier) @name
                              (nested_type_identifier name: (type_identifier) @name)])]) @reference.inherits

; Calls: f(), obj.f(), obj?.f(), obj.#f(), f<T>(), new Foo(), new ns.Foo<T>()
(call_expression function: (identifier) @name) @reference.call
(call_expression
  function: (member_expression
    property: [(property_identifier) (private_property_identifier)] @name)) @reference.call
(new_expression
  constructor: [(identifier) @name
                (member_expression property: (property_identifier) @name)]) @reference.call

; Imports.
; import 'x'
(import_statement . source: (string (string_fragment) @import.module)) @import
; import X from 'x'
(import_statement
  (import_clause (identifier) @import.alias)
  source: (string (string_fragment) @import.module)) @import
; import * as ns from 'x'
(import_statement
  (import_clause (namespace_import (identifier) @import.alias))
  source: (string (string_fragment) @import.module)) @import
; import { a, b as c } from 'x' (also `import type {...}`)
(import_statement
  (import_clause
    (named_imports
      (import_specifier name: (_) @import.name alias: (identifier)? @import.alias)))
  source: (string (string_fragment) @import.module)) @import
; import fs = require('fs')
(import_statement
  (import_require_clause
    (identifier) @import.alias
    source: (string (string_fragment) @import.module))) @import
; export { a, b as c } from 'x'; export * from 'x'; export * as ns from 'x'
(export_statement
  (export_clause (export_specifier name: (_) @import.name))
  source: (string (string_fragment) @import.module)) @import
(export_statement . "export" . "*" source: (string (string_fragment) @import.module)) @import
(export_statement (namespace_export) source: (string (string_fragment) @import.module)) @import
; const x = require('x')
((variable_declarator
  name: (identifier) @import.alias
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @import.module) .))) @import
  (#eq? @_require "require"))
