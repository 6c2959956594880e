; C++. Qualified names use `::` (`geo::Shape::area`). Function definitions
; (free, in-class, out-of-class `Type::method` with @receiver = Type) and the
; method declarations inside class bodies (a header's class is its API); free
; prototypes in header files as in C. Templates are captured through their inner
; class/function, whose doc comment is found above the `template <...>` line.

; --- Function definitions ---------------------------------------------------
; Plain names: free functions, in-class methods, constructors, destructors, operators.
(function_definition
  declarator: [
    (function_declarator
      declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(identifier) (field_identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(identifier) (field_identifier) (operator_name)] @name))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name)))
  ]) @definition.function

; Out of class: `void Shape::draw()`, `Box<T>::set`, `Shape::~Shape`, `ns::Shape::draw`.
(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) @receiver (template_type name: (type_identifier) @receiver)]
      name: [(identifier) (destructor_name) (operator_name)] @name))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) @receiver (template_type name: (type_identifier) @receiver)]
      name: [(identifier) (operator_name)] @name)))
    (reference_declarator (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) @receiver (template_type name: (type_identifier) @receiver)]
      name: [(identifier) (operator_name)] @name)))
  ]) @definition.function

(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        scope: [(namespace_identifier) @receiver (template_type name: (type_identifier) @receiver)]
        name: [(identifier) (destructor_name) (operator_name)] @name)))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        scope: [(namespace_identifier) @receiver (template_type name: (type_identifier) @receiver)]
        name: [(identifier) (operator_name)] @name))))
    (reference_declarator (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        scope: [(namespace_identifier) @receiver (template_type name: (type_identifier) @receiver)]
        name: [(identifier) (operator_name)] @name))))
  ]) @definition.function

; Method declarations in a class body: `virtual double area() const = 0;`. An
; all-caps name there is an annotation macro the grammar reads as a declaration
; (`Status bg_error_ GUARDED_BY(mutex_);`, `void F() EXCLUSIVE_LOCKS_REQUIRED(mu_);`).
((field_declaration_list
  (field_declaration
    declarator: [
      (function_declarator
        declarator: [(field_identifier) (identifier) (destructor_name) (operator_name)] @name)
      (pointer_declarator
        declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
      (reference_declarator
        (function_declarator declarator: [(field_identifier) (operator_name)] @name))
    ]) @definition.function)
  (#not-match? @name "^[A-Z][A-Z0-9_]*$"))
; Constructor and destructor declarations parse as plain declarations.
((field_declaration_list
  (declaration
    declarator: (function_declarator
      declarator: [(identifier) (destructor_name)] @name)) @definition.function)
  (#not-match? @name "^[A-Z][A-Z0-9_]*$"))

; --- Types ------------------------------------------------------------------
(class_specifier
  name: [(type_identifier) @name (template_type name: (type_identifier) @name)]
  body: (_)) @definition.class
(struct_specifier
  name: [(type_identifier) @name (template_type name: (type_identifier) @name)]
  body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
; A nested type defined out of its class: `class VersionSet::Builder {...}`.
(class_specifier
  name: (qualified_identifier scope: (_) @receiver name: (type_identifier) @name)
  body: (_)) @definition.class
(struct_specifier
  name: (qualified_identifier scope: (_) @receiver name: (type_identifier) @name)
  body: (_)) @definition.struct
; `class LEVELDB_EXPORT DB {...}`: an export macro before the name makes the grammar
; read a function definition named DB whose type is `class LEVELDB_EXPORT`.
(function_definition
  type: (class_specifier name: (type_identifier) !body)
  declarator: (identifier) @name
  body: (compound_statement)) @definition.class
(function_definition
  type: (struct_specifier name: (type_identifier) !body)
  declarator: (identifier) @name
  body: (compound_statement)) @definition.struct

; C-style typedefs (see c.scm).
(type_definition type: (struct_specifier name: (type_identifier) @name body: (_))) @definition.struct
(type_definition type: (union_specifier name: (type_identifier) @name body: (_))) @definition.union
(type_definition type: (enum_specifier name: (type_identifier) @name body: (_))) @definition.enum
(type_definition type: (struct_specifier !name body: (_)) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (union_specifier !name body: (_)) declarator: (type_identifier) @name) @definition.union
(type_definition type: (enum_specifier !name body: (_)) declarator: (type_identifier) @name) @definition.enum
(type_definition
  type: [
    (primitive_type) (type_identifier) (sized_type_specifier) (qualified_identifier)
    (template_type) (struct_specifier !body) (union_specifier !body) (enum_specifier !body)
  ]
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (array_declarator declarator: (type_identifier) @name)
    (function_declarator
      declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))
  ]) @definition.type

; `using Ints = std::vector<int>;`
(alias_declaration name: (type_identifier) @name) @definition.type

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace

(preproc_function_def name: (identifier) @name) @definition.macro

; --- Base classes -----------------------------------------------------------
(base_class_clause
  [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier
      name: [(type_identifier) @name (template_type name: (type_identifier) @name)])
  ] @reference.inherits)

; --- Calls ------------------------------------------------------------------
(call_expression function: (identifier) @name) @reference.call
(call_expression
  function: (field_expression
    field: [(field_identifier) @name (template_method name: (field_identifier) @name)])) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
; Type::make(), std::sort(), std::make_shared<T>(), a::b::f()
(call_expression
  function: (qualified_identifier
    name: [
      (identifier) @name
      (template_function name: (identifier) @name)
      (qualified_identifier
        name: [(identifier) @name (template_function name: (identifier) @name)])
    ])) @reference.call

; --- Imports ----------------------------------------------------------------
(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import
; using std::string;
(using_declaration
  (qualified_identifier scope: (_) @import.module name: (_) @import.name)) @import
; using namespace std;
(using_declaration "namespace" (identifier) @import.module) @import

; Free prototypes outside class bodies: kept as functions only in header files that do
; not define them too (parsing/extractor.py, _settle_prototypes), as in C.
((declaration
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (reference_declarator (function_declarator declarator: (identifier) @name))
  ]) @definition.prototype
  (#not-match? @name "^[A-Z][A-Z0-9_]*$"))
