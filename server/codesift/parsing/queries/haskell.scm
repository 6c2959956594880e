; The module the file declares: `module Data.Inventory (...) where`.
(header module: (module) @package)

; Functions. A function with several equations (`f [] = ..; f (x:xs) = ..`) would
; give one node per equation, so only the first equation is captured: one whose
; previous sibling is not an equation of the same name. Its type signature is a
; separate sibling and is not captured. Applies to top-level declarations,
; instance bodies and functions of `where`/`let` blocks (there, argument-less
; bindings are local values and are skipped).
;
; The first declaration of a block.
(declarations
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(instance_declarations
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(local_binds . (function name: (variable) @name) @definition.function)
; After an equation of another function.
((declarations
   [(function name: (variable) @_prev) (bind name: (variable) @_prev)]
   . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
 (#not-eq? @_prev @name))
((instance_declarations
   [(function name: (variable) @_prev) (bind name: (variable) @_prev)]
   . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
 (#not-eq? @_prev @name))
((local_binds
   (function name: (variable) @_prev)
   . (function name: (variable) @name) @definition.function)
 (#not-eq? @_prev @name))
; After any other declaration. One pattern per type: a sibling alternation of these
; types is ~4x slower, and an uncaptured one loses matches in tree-sitter 0.26.
(declarations (signature) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (haddock) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (comment) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (pragma) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (cpp) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (data_type) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (newtype) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (type_synomym) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (class) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (instance) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (deriving_instance) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (type_family) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (type_instance) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (data_family) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (data_instance) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (foreign_import) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (foreign_export) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (fixity) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (pattern_synonym) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (role_annotation) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (default_types) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (kind_signature) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(declarations (top_splice) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(instance_declarations (signature) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(instance_declarations (haddock) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(instance_declarations (comment) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(instance_declarations (pragma) @_prev
  . [(function name: (variable) @name) (bind name: (variable) @name)] @definition.function)
(local_binds (signature) @_prev
  . (function name: (variable) @name) @definition.function)
(local_binds (haddock) @_prev
  . (function name: (variable) @name) @definition.function)
(local_binds (comment) @_prev
  . (function name: (variable) @name) @definition.function)
(local_binds (pragma) @_prev
  . (function name: (variable) @name) @definition.function)
(local_binds (bind) @_prev
  . (function name: (variable) @name) @definition.function)

; Class methods are declared by their signatures (a default implementation in
; the class body is not a separate node).
(class_declarations (signature name: (variable) @name) @definition.method)

; Types and classes.
(data_type name: (name) @name) @definition.type
(newtype name: (name) @name) @definition.type
(type_synomym name: (name) @name) @definition.type
(type_family name: (name) @name) @definition.type
(data_family name: (name) @name) @definition.type
(class name: (name) @name) @definition.interface

; Pattern synonyms act as data constructors: `pattern T_Bang id = OuterToken id Inner_T_Bang`.
(pattern_synonym
  (equation
    synonym: [
      (constructor) @name
      (apply function: (constructor) @name)
      (apply function: (apply function: (constructor) @name))
      (apply function: (apply function: (apply function: (constructor) @name)))
      (apply function: (apply function: (apply function: (apply function: (constructor) @name))))
      (apply function: (apply function: (apply function: (apply function:
        (apply function: (constructor) @name)))))
      (apply function: (apply function: (apply function: (apply function:
        (apply function: (apply function: (constructor) @name))))))
    ])) @definition.constructor

; `instance Valued Item where` qualifies its methods by the instance type: Item.value.
(instance
  patterns: (type_patterns . [(name) @name (parens type: (apply constructor: (name) @name))])
  ) @scope

; Inheritance: superclasses of a class, classes a data type derives.
(class
  context: (context
    context: [(apply constructor: (name) @name) (tuple (apply constructor: (name) @name))]
    @reference.inherits))
(data_type
  deriving: (deriving classes: [(name) @name (tuple (name) @name)] @reference.inherits))
(newtype
  deriving: (deriving classes: [(name) @name (tuple (name) @name)] @reference.inherits))

; Calls: the head of an application `f x y` (also `M.f x`), and `f $ x`.
(apply function: (variable) @name) @reference.call
(apply function: (qualified id: (variable) @name)) @reference.call
(infix
  left_operand: [(variable) @name (qualified id: (variable) @name)]
  operator: (operator) @_op
  (#eq? @_op "$")) @reference.call

; Imports: the module (and its `as` alias), and each name of an import list
; (not of a `hiding` list).
(import module: (module) @import.module alias: (module)? @import.alias) @import
((import
   module: (module) @import.module
   names: (import_list (import_name [(variable) (name)] @import.name))) @import
 (#not-match? @import "\\shiding\\s"))
