; Zig (maxxnino grammar: CamelCase node names). A definition is the whole
; `Decl` so that the `///` doc comment before it attaches. Containers assigned
; to a const (`const Point = struct {...}`) are types; other consts and test
; blocks are left out.

(Decl (FnProto function: (IDENTIFIER) @name)) @definition.function

((Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_kind)))))
  @definition.struct
  (#match? @_kind "^struct"))
((Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_kind)))))
  @definition.enum
  (#match? @_kind "^enum"))
((Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_kind)))))
  @definition.union
  (#match? @_kind "^union"))
((Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_kind)))))
  @definition.type
  (#match? @_kind "^opaque"))
; `const Error = error{ Oops };`
(Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr (SuffixExpr (ErrorSetDecl))))) @definition.type
; `const Error = error{ Oops } || posix.UnexpectedError;`
(Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (BinaryExpr left: (ErrorUnionExpr (SuffixExpr (ErrorSetDecl)))))) @definition.type

; A type made by a type function, Zig's generics: `pub const Epoll = Xev(.epoll, ...)`,
; `const Queue = IntrusiveQueue(Completion);` (type functions are TitleCase).
((Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr
      (SuffixExpr variable_type_function: (IDENTIFIER) @_callee . (FnCallArguments) .))))
  @definition.type
  (#match? @_callee "^[A-Z]"))

; Calls: f(x) and a.b.f(x).
(SuffixExpr variable_type_function: (IDENTIFIER) @name . (FnCallArguments)) @reference.call
(FieldOrFnCall function_call: (IDENTIFIER) @name) @reference.call

; Imports: `const std = @import("std");` (the const is the alias) and any other
; `@import("...")`; both forms of one import collapse into one edge.
((VarDecl
  variable_type_function: (IDENTIFIER) @import.alias
  (ErrorUnionExpr
    (SuffixExpr
      (BUILTINIDENTIFIER) @_builtin
      .
      (FnCallArguments (ErrorUnionExpr (SuffixExpr (STRINGLITERALSINGLE) @import.module))))))
  @import
  (#eq? @_builtin "@import"))
((SuffixExpr
  (BUILTINIDENTIFIER) @_builtin
  .
  (FnCallArguments (ErrorUnionExpr (SuffixExpr (STRINGLITERALSINGLE) @import.module))))
  @import
  (#eq? @_builtin "@import"))
