; Scala 2 and 3. Qualified names are prefixed with the package: com.example.Foo.bar.

(package_clause name: (package_identifier) @package)

; Types. An object is a class with a single instance. Names may be operators
; (os-lib's `object /`, `def +(elem)`).
(class_definition name: [(identifier) (operator_identifier)] @name) @definition.class
(object_definition name: [(identifier) (operator_identifier)] @name) @definition.class
(package_object name: (identifier) @name) @definition.module
(trait_definition name: (identifier) @name) @definition.trait
(enum_definition name: (identifier) @name) @definition.enum
(type_definition name: (type_identifier) @name) @definition.type

; Functions (methods inside a class, object or trait). `def this(...)` is an
; auxiliary constructor.
((function_definition name: (identifier) @name) @definition.constructor
  (#eq? @name "this"))
((function_definition name: (identifier) @name) @definition.function
  (#not-eq? @name "this"))
(function_definition name: (operator_identifier) @name) @definition.function
(function_declaration name: [(identifier) (operator_identifier)] @name) @definition.function

; Scala 3 given instances, and the values of an object or a file (`val pwd: Path`
; in `package object os`): an object's vals are its API. A class's vals are fields.
(given_definition name: (identifier) @name) @definition.constant
(compilation_unit (val_definition pattern: (identifier) @name) @definition.constant)
(object_definition
  body: (template_body (val_definition pattern: (identifier) @name) @definition.constant))
(package_object
  body: (template_body (val_definition pattern: (identifier) @name) @definition.constant))

; Inheritance: extends Base(x) with T1 with T2[A]
; (`type:` also labels the `with` keywords, which stops field matching after the
; first type: match the children without the field.)
(extends_clause
  [(type_identifier) @name
         (stable_type_identifier) @name
         (generic_type type: [(type_identifier) (stable_type_identifier)] @name)]) @reference.inherits

; Calls: f(x), obj.f(x), f[T](x), new Foo(x).
((call_expression function: (identifier) @name) @reference.call
  (#not-eq? @name "this"))
(call_expression function: (field_expression field: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function
    function: [(identifier) @name
               (field_expression field: (identifier) @name)])) @reference.call
(instance_expression
  [(type_identifier) @name
   (stable_type_identifier) @name
   (generic_type type: [(type_identifier) (stable_type_identifier)] @name)]) @reference.call

; Imports. The path is a run of identifiers separated by "." tokens: all but
; the last are captured as a (quantified) @import.module.
; import a.b.C
(import_declaration
  . (identifier) @import.module ("." (identifier) @import.module)*
  . (identifier) @import.name .) @import
; import a._ / import a.b.*
(import_declaration
  . (identifier) @import.module ("." (identifier) @import.module)*
  . (namespace_wildcard)) @import
; import a.b.{C, D => E}
(import_declaration
  . (identifier) @import.module ("." (identifier) @import.module)*
  . (namespace_selectors
      [(identifier) @import.name
       (arrow_renamed_identifier
         name: (identifier) @import.name
         alias: (identifier) @import.alias)])) @import
