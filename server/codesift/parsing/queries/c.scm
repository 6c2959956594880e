; C. Function definitions, the prototypes of header files (the API; a forward
; declaration elsewhere would shadow its definition when calls are resolved), structs,
; unions, enums, typedefs and function-like macros. Object-like #defines are left out (include guards and
; large constant tables would flood the index).

; Functions, including pointer-returning ones (`char **split(...)`).
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator
      declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function

; Tagged types with a body. `typedef struct tag {...} tag_t;` is captured whole
; under the tag name (the wider match wins, so the doc comment above the
; typedef attaches); `typedef struct {...} name;` takes the typedef name.
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition type: (struct_specifier name: (type_identifier) @name body: (_))) @definition.struct
(type_definition type: (union_specifier name: (type_identifier) @name body: (_))) @definition.union
(type_definition type: (enum_specifier name: (type_identifier) @name body: (_))) @definition.enum
(type_definition type: (struct_specifier !name body: (_)) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (union_specifier !name body: (_)) declarator: (type_identifier) @name) @definition.union
(type_definition type: (enum_specifier !name body: (_)) declarator: (type_identifier) @name) @definition.enum

; Other typedefs: `typedef unsigned long size;`, `typedef struct node *node_ptr;`,
; `typedef int (*cmp_fn)(const void *, const void *);`.
(type_definition
  type: [
    (primitive_type) (type_identifier) (sized_type_specifier) (macro_type_specifier)
    (struct_specifier !body) (union_specifier !body) (enum_specifier !body)
  ]
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (array_declarator declarator: (type_identifier) @name)
    (function_declarator
      declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))
  ]) @definition.type

; Function-like macros.
(preproc_function_def name: (identifier) @name) @definition.macro

; Calls: f(), s.f(), p->f() (function pointers in structs).
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

; #include "x.h" / <x.h>
(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import

; Prototypes: in a header they are the library's API (its doc comments are there),
; kept as functions by the extractor only in header files and only when the header
; does not define the function as well (parsing/extractor.py, _settle_prototypes).
; An all-caps name is a macro call the grammar reads as a declaration.
((declaration
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator
      declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.prototype
  (#not-match? @name "^[A-Z][A-Z0-9_]*$"))
