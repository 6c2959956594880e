; Java. Qualified names are prefixed with the package: com.example.Foo.bar.

(package_declaration [(scoped_identifier) (identifier)] @package)

; Types.
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface

; Members.
(method_declaration name: (identifier) @name) @definition.method
(annotation_type_element_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(compact_constructor_declaration name: (identifier) @name) @definition.constructor
; Enum constants (with their body when they have one), as PHP enum cases are.
(enum_constant name: (identifier) @name) @definition.constant

; Inheritance: extends Base, implements I, J; interface extends A, B.
(superclass
  [(type_identifier) @name
   (scoped_type_identifier) @name
   (generic_type [(type_identifier) (scoped_type_identifier)] @name)]) @reference.inherits
(super_interfaces
  (type_list
    [(type_identifier) @name
     (scoped_type_identifier) @name
     (generic_type [(type_identifier) (scoped_type_identifier)] @name)])) @reference.inherits
(extends_interfaces
  (type_list
    [(type_identifier) @name
     (scoped_type_identifier) @name
     (generic_type [(type_identifier) (scoped_type_identifier)] @name)])) @reference.inherits

; Calls: f(), obj.f(), new Foo(), new Foo<>(), new pkg.Foo().
(method_invocation name: (identifier) @name) @reference.call
(object_creation_expression
  type: [(type_identifier) @name
         (scoped_type_identifier) @name
         (generic_type [(type_identifier) (scoped_type_identifier)] @name)]) @reference.call

; Imports: import a.b.C; import static a.b.C.m; import a.b.*;
(import_declaration [(scoped_identifier) (identifier)] @import.module) @import
