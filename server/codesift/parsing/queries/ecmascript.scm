; JavaScript and TypeScript alike: the patterns both grammars share, read before
; javascript.scm and typescript.scm (parsing/grammars.py, query_source).
; Definitions are captured as the declaration itself; the extractor climbs
; `export_statement` to find a leading JSDoc comment.

; Functions.
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function

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

; exports.Manager = class {...}, internals.Server = class extends Base {...}: an
; anonymous class assigned to a property is named by the property ...
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

; Class members; method_definition also covers object-literal shorthand
; methods (`{ m() {} }`), which are methods of that object.
((method_definition name: (property_identifier) @name) @definition.constructor
  (#eq? @name "constructor"))
((method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method
  (#not-eq? @name "constructor"))

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
; import { a, b as c } from 'x' (also TypeScript's `import type {...}`)
(import_statement
  (import_clause
    (named_imports
      (import_specifier name: (_) @import.name alias: (identifier)? @import.alias)))
  source: (string (string_fragment) @import.module)) @import
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
