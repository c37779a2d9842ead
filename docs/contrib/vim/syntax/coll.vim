" Vim syntax file for collc's .coll language (docs/language.md)
if exists("b:current_syntax")
  finish
endif

syn keyword collDecl param network topology group tree trees collective
syn keyword collKeyword on root translate map include nodes switches link algorithm chunks routing ranks all auto
syn keyword collKind allreduce reduce_scatter allgather alltoall broadcast reduce
syn keyword collTopo torus mesh ring full hyperx spine_leaf supermesh optical_ring graph
syn match collNumber "\<\d\+\(\.\d*\)\=\([eE][-+]\=\d\+\)\=\>"
syn match collUnit "\<\d\+\(\.\d*\)\=\s*\zs\(B\|KB\|MB\|GB\|TB\|KiB\|MiB\|GiB\|TiB\|[KMGT]\=bps\|[KMGT]\=i\=Bps\|ps\|ns\|us\|ms\|s\|[pnum]\=J\)\>"
syn match collOperator "->\|<->\|\.\."
syn region collComment start="/\*" end="\*/" contains=@Spell
syn match collLineComment "//.*$" contains=@Spell

hi def link collDecl Statement
hi def link collKeyword Keyword
hi def link collKind Type
hi def link collTopo Function
hi def link collNumber Number
hi def link collUnit Special
hi def link collOperator Operator
hi def link collComment Comment
hi def link collLineComment Comment

let b:current_syntax = "coll"
