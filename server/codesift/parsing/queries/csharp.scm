; C#. Namespaces are definitions, so names come out as Ns.Type.Member.

; Block-scoped namespaces contain their types.
(namespace_declaration name: [(identifier) (qualified_name)] @name) @definition.namespace
; A file-scoped namespace (`namespace A.B;`) does not contain the declarations
; after it in the tree, so it cannot be a definition; it is captured as the
; file's package (used only when the language's qualifier style is "package").
(file_scoped_namespace_declaration name: [(identifier) (qualified_name)] @package)

; Types. `record struct` is a struct, any other record a class. Both patterns
; match a record struct's name with the same span; the earlier pattern's match
; comes first and wins, so the struct pattern must stay above the class one.
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration "struct" name: (identifier) @name) @definition.struct
(record_declaration name: (identifier) @name) @definition.class
(delegate_declaration name: (identifier) @name) @definition.type

; Members.
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(local_function_statement name: (identifier) @name) @definition.function

; Inheritance: class C : Base, IFoo<T>, Ns.IBar; record R(..) : Base(..)
(base_list
  [(identifier) @name
   (generic_name (identifier) @name)
   (qualified_name name: [(identifier) @name (generic_name (identifier) @name)])
   (primary_constructor_base_type
     type: [(identifier) @name
            (generic_name (identifier) @name)
            (qualified_name name: [(identifier) @name (generic_name (identifier) @name)])])
  ]) @reference.inherits

; Calls: F(), obj.F(), obj?.F(), F<T>(), new Foo(), new List<T>(), new Ns.Foo().
((invocation_expression function: (identifier) @name) @reference.call
  (#not-eq? @name "nameof"))
(invocation_expression function: (generic_name (identifier) @name)) @reference.call
(invocation_expression
  function: (member_access_expression
    name: [(identifier) @name (generic_name (identifier) @name)])) @reference.call
(invocation_expression
  function: (conditional_access_expression
    (member_binding_expression
      name: [(identifier) @name (generic_name (identifier) @name)]))) @reference.call
(object_creation_expression
  type: [(identifier) @name
         (generic_name (identifier) @name)
         (qualified_name name: [(identifier) @name (generic_name (identifier) @name)])]) @reference.call

; Imports: using System.Text; using static System.Math; using A = B.C;
(using_directive . [(identifier) (qualified_name)] @import.module .) @import
(using_directive
  name: (identifier) @import.alias
  [(identifier) (qualified_name) (generic_name)] @import.module) @import
