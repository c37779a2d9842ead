/*
 * coll.y: the grammar of the .coll language. A pure parser with locations;
 * every action calls one builder of ast.c and does nothing else. The tree is
 * uniform (see ast.h): sema decides which forms and items belong where.
 * Errors recover at the end of a statement or block and parsing goes on,
 * so one run reports every syntax error (up to the diag limit).
 */
%define api.pure full
%define api.value.type union
%define parse.error custom
%define parse.lac full
%locations
%expect 0

%code requires {
#include "ast.h"
#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif
}

%code provides {
int yylex(YYSTYPE *, YYLTYPE *, yyscan_t);
}

%code {
#include <string.h>
static void yyerror(YYLTYPE *, yyscan_t, Parse *, const char *);
#define LOC(l) ((Loc){(l).first_line, (l).first_column})
}

%lex-param {yyscan_t scanner}
%parse-param {yyscan_t scanner} {Parse *p}

%token END 0 "end of file"
%token <Expr *> NUMBER "number"
%token <const char *> IDENT "identifier"
%token <const char *> STRING "string"
%token KW_NETWORK "network" KW_TOPOLOGY "topology" KW_GROUP "group"
%token KW_TREE "tree" KW_TREES "trees" KW_COLLECTIVE "collective" KW_ON "on"
%token KW_ROOT "root" KW_TRANSLATE "translate" KW_MAP "map" KW_INCLUDE "include"
%token KW_NODES "nodes" KW_SWITCHES "switches" KW_LINK "link"
%token KW_ALGORITHM "algorithm" KW_CHUNKS "chunks" KW_ROUTING "routing"
%token KW_RANKS "ranks" KW_ALL "all" KW_AUTO "auto"
%token KW_SCHEDULE "schedule" KW_ROUND "round" KW_TOGETHER "together" KW_FOR "for"
%token KW_IN "in" KW_LET "let" KW_IF "if" KW_ELSE "else" KW_SEND "send" KW_FROM "from"
%token KW_TO "to" KW_OVER "over" KW_USE "use" KW_MOD "mod" KW_AND "and" KW_OR "or"
%token KW_NOT "not" KW_PARAM "param"
%token ARROW "->" BIARROW "<->" DOTDOT ".." EQ "==" NE "!=" LE "<=" GE ">="
/* In a call's arguments `gpu (0, 3)` could be a label with a tuple or a
 * node's name: the label is read (as before names existed) and ast.c's
 * ast_call_arg makes a node class's word with a tuple a name again. */
%precedence '('
%precedence LABEL

%type <Expr *> expr sum term unary primary number
%type <ExprList *> exprs maps
%type <Call *> call args
%type <const char *> label
%type <Block *> block items
%type <Item *> item
%type <Expr *> sx sx_or sx_and sx_cmp sx_sum sx_term sx_unary sx_primary
%type <ExprList *> sx_list
%type <Stmt *> stmt if_stmt send
%type <StmtList *> stmts body
%type <Schedule *> sched_head

%%

file
	: %empty
	| file decl
	;

decl
	: "network" block opt_semi
		{ ast_decl(p, DC_NETWORK, LOC(@1), @2.last_line)->body = $2; }
	| "topology" IDENT '=' call ';'
		{ Decl *d = ast_decl(p, DC_TOPOLOGY, LOC(@1), @$.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->form = $4; }
	| "topology" IDENT '=' call block opt_semi
		{ Decl *d = ast_decl(p, DC_TOPOLOGY, LOC(@1), @5.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->form = $4; d->body = $5; }
	| "group" IDENT '=' call ';'
		{ Decl *d = ast_decl(p, DC_GROUP, LOC(@1), @$.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->form = $4; }
	| "group" IDENT "on" IDENT block opt_semi
		{ Decl *d = ast_decl(p, DC_GROUP, LOC(@1), @5.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->on = $4; d->on_loc = LOC(@4);
		  d->body = $5; }
	| "tree" IDENT '=' call ';'
		{ Decl *d = ast_decl(p, DC_TREE, LOC(@1), @$.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->form = $4; }
	| "tree" IDENT "on" IDENT "root" expr block opt_semi
		{ Decl *d = ast_decl(p, DC_TREE, LOC(@1), @7.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->on = $4; d->on_loc = LOC(@4);
		  d->root = $6; d->body = $7; }
	| "trees" IDENT '=' call ';'
		{ Decl *d = ast_decl(p, DC_TREES, LOC(@1), @$.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->form = $4; }
	| "param" IDENT '=' expr ';'
		{ Decl *d = ast_decl(p, DC_PARAM, LOC(@1), @$.last_line);
		  d->name = $2; d->name_loc = LOC(@2); d->value = $4; }
	| "collective" IDENT IDENT "on" IDENT block opt_semi
		{ Decl *d = ast_decl(p, DC_COLLECTIVE, LOC(@1), @6.last_line);
		  d->ckind = $2; d->ckind_loc = LOC(@2); d->name = $3; d->name_loc = LOC(@3);
		  d->on = $5; d->on_loc = LOC(@5); d->body = $6; }
	| error ';'    { yyerrok; }
	| error '}'    { yyerrok; }
	| error block  { yyerrok; }
	;

opt_semi
	: %empty
	| ';'
	;

block
	: '{' items '}'    { $$ = ast_block_close(p, $2); $$->loc = LOC(@1); $$->end = LOC(@3); }
	;

items
	: %empty           { $$ = ast_block(p, LOC(@$)); }
	| items item       { $$ = ast_block_add(p, $1, $2); }
	| items error ';'  { $$ = $1; yyerrok; }
	;

item
	: IDENT '=' expr ';'
		{ $$ = ast_item(p, IT_PARAM, LOC(@1)); $$->name = $1; $$->name_loc = LOC(@1);
		  $$->value = $3; $$->end_line = @$.last_line; }
	| "network" block opt_semi
		{ $$ = ast_item(p, IT_NETWORK, LOC(@1)); $$->body = $2; $$->end_line = @2.last_line; }
	| "nodes" expr ';'
		{ $$ = ast_item(p, IT_NODES, LOC(@1)); $$->value = $2; $$->end_line = @$.last_line; }
	| "switches" exprs ';'
		{ $$ = ast_item(p, IT_SWITCHES, LOC(@1)); $$->list = *$2; $$->end_line = @$.last_line; }
	| "link" expr "->" expr ';'
		{ $$ = ast_item(p, IT_LINK, LOC(@1)); $$->from = $2; $$->to = $4;
		  $$->end_line = @$.last_line; }
	| "link" expr "<->" expr ';'
		{ $$ = ast_item(p, IT_LINK, LOC(@1)); $$->from = $2; $$->to = $4; $$->flag = true;
		  $$->end_line = @$.last_line; }
	| "link" expr "->" expr block opt_semi
		{ $$ = ast_item(p, IT_LINK, LOC(@1)); $$->from = $2; $$->to = $4; $$->body = $5;
		  $$->end_line = @5.last_line; }
	| "link" expr "<->" expr block opt_semi
		{ $$ = ast_item(p, IT_LINK, LOC(@1)); $$->from = $2; $$->to = $4; $$->flag = true;
		  $$->body = $5; $$->end_line = @5.last_line; }
	| "translate" ';'
		{ $$ = ast_item(p, IT_TRANSLATE, LOC(@1)); $$->end_line = @$.last_line; }
	| "translate" expr ';'
		{ $$ = ast_item(p, IT_TRANSLATE, LOC(@1)); $$->value = $2; $$->end_line = @$.last_line; }
	| "map" maps ';'
		{ $$ = ast_item(p, IT_MAP, LOC(@1)); $$->list = *$2; $$->end_line = @$.last_line; }
	| "include" IDENT ';'
		{ $$ = ast_item(p, IT_INCLUDE, LOC(@1)); $$->name = $2; $$->name_loc = LOC(@2);
		  $$->end_line = @$.last_line; }
	| expr "->" expr ';'
		{ $$ = ast_item(p, IT_EDGE, LOC(@1)); $$->from = $1; $$->to = $3;
		  $$->end_line = @$.last_line; }
	| "algorithm" call ';'
		{ $$ = ast_item(p, IT_ALGORITHM, LOC(@1)); $$->call = $2; $$->end_line = @$.last_line; }
	| "algorithm" "auto" ';'
		{ $$ = ast_item(p, IT_ALGORITHM, LOC(@1)); $$->flag = true; $$->end_line = @$.last_line; }
	| "chunks" expr ';'
		{ $$ = ast_item(p, IT_CHUNKS, LOC(@1)); $$->value = $2; $$->end_line = @$.last_line; }
	| "chunks" "auto" ';'
		{ $$ = ast_item(p, IT_CHUNKS, LOC(@1)); $$->flag = true; $$->end_line = @$.last_line; }
	| "routing" IDENT ';'
		{ $$ = ast_item(p, IT_ROUTING, LOC(@1)); $$->name = $2; $$->name_loc = LOC(@2);
		  $$->end_line = @$.last_line; }
	| "ranks" "all" ';'
		{ $$ = ast_item(p, IT_RANKS, LOC(@1)); $$->flag = true; $$->end_line = @$.last_line; }
	| "ranks" exprs ';'
		{ $$ = ast_item(p, IT_RANKS, LOC(@1)); $$->list = *$2; $$->end_line = @$.last_line; }
	| "root" expr ';'
		{ $$ = ast_item(p, IT_ROOT, LOC(@1)); $$->value = $2; $$->end_line = @$.last_line; }
	| "schedule" sched_head body opt_semi
		{ $$ = ast_item(p, IT_SCHEDULE, LOC(@1)); $$->sched = $2; $$->sched->body = $3;
		  $$->end_line = @3.last_line; }
	;

maps
	: expr "->" expr            { $$ = ast_list(p, ast_list(p, NULL, $1), $3); }
	| maps ',' expr "->" expr   { $$ = ast_list(p, ast_list(p, $1, $3), $5); }
	;

call
	: IDENT                { $$ = ast_call(p, LOC(@1), $1, false); }
	| IDENT '(' ')'        { $$ = ast_call(p, LOC(@1), $1, true); }
	| IDENT '(' args ')'   { $$ = $3; $$->loc = LOC(@1); $$->name = $1; }
	;

/* A label takes its first value here; later positional values join it (ast.c).
 * `auto` (a keyword) is a labelled value as a name: `segments auto` (bind.c). */
args
	: expr                     { $$ = ast_call_arg(p, ast_call(p, LOC(@1), NULL, true), LOC(@1), NULL, $1); }
	| label primary            { $$ = ast_call_arg(p, ast_call(p, LOC(@1), NULL, true), LOC(@1), $1, $2); }
	| label "auto"             { $$ = ast_call_arg(p, ast_call(p, LOC(@1), NULL, true), LOC(@1), $1,
	                                               ast_name(p, LOC(@2), "auto")); }
	| args ',' expr            { $$ = ast_call_arg(p, $1, LOC(@3), NULL, $3); }
	| args ',' label primary   { $$ = ast_call_arg(p, $1, LOC(@3), $3, $4); }
	| args ',' label "auto"    { $$ = ast_call_arg(p, $1, LOC(@3), $3, ast_name(p, LOC(@4), "auto")); }
	;

label
	: IDENT %prec LABEL { $$ = $1; }
	| "root"       { $$ = "root"; }
	| "group"      { $$ = "group"; }
	| "trees"      { $$ = "trees"; }
	;

exprs
	: expr             { $$ = ast_list(p, NULL, $1); }
	| exprs ',' expr   { $$ = ast_list(p, $1, $3); }
	;

expr
	: sum
	| sum ".." sum     { $$ = ast_binary(p, LOC(@1), EX_RANGE, $1, $3); }
	;

sum
	: term
	| sum '+' term     { $$ = ast_binary(p, LOC(@1), EX_ADD, $1, $3); }
	| sum '-' term     { $$ = ast_binary(p, LOC(@1), EX_SUB, $1, $3); }
	;

term
	: unary
	| term '*' unary   { $$ = ast_binary(p, LOC(@1), EX_MUL, $1, $3); }
	;

unary
	: primary
	| '-' unary        { $$ = ast_unary(p, LOC(@1), EX_NEG, $2); }
	;

primary
	: number
	| IDENT            { $$ = ast_name(p, LOC(@1), $1); }
	| IDENT '(' exprs ')' { $$ = ast_call_expr(p, LOC(@1), $1, $3); }
	| '(' exprs ')'    { $$ = ast_tuple(p, LOC(@1), $2); }
	| STRING           { $$ = ast_string(p, LOC(@1), $1); }
	;

number
	: NUMBER
	| NUMBER IDENT     { $$ = ast_with_unit(p, $1, $2, LOC(@2)); }
	;

/* ---- user schedules (schedule.c builds, sema_schedule checks) ---- */

sched_head
	: %empty            { $$ = ast_schedule_mod(p, NULL, NULL); }
	| sched_head call   { $$ = ast_schedule_mod(p, $1, $2); }
	;

body
	: '{' stmts '}'     { $$ = $2; $$->open = LOC(@1); $$->end = LOC(@3); }
	;

stmts
	: %empty            { $$ = ast_stmts(p, NULL, NULL); }
	| stmts stmt        { $$ = ast_stmts(p, $1, $2); }
	| stmts error ';'   { $$ = $1; yyerrok; }
	;

stmt
	: "let" IDENT '=' sx ';'
		{ $$ = ast_stmt(p, ST_LET, LOC(@1)); $$->name = $2; $$->name_loc = LOC(@2);
		  $$->value = $4; $$->end_line = @$.last_line; }
	| "for" IDENT "in" sx body
		{ $$ = ast_stmt(p, ST_FOR, LOC(@1)); $$->name = $2; $$->name_loc = LOC(@2);
		  $$->value = $4; $$->body = $5; $$->end_line = @$.last_line; }
	| if_stmt
	| "round" body
		{ $$ = ast_stmt(p, ST_ROUND, LOC(@1)); $$->body = $2; $$->end_line = @$.last_line; }
	| "together" body
		{ $$ = ast_stmt(p, ST_TOGETHER, LOC(@1)); $$->body = $2; $$->end_line = @$.last_line; }
	| send ';'
		{ $$ = $1; $$->end_line = @$.last_line; }
	| send "over" "link" ';'
		{ $$ = $1; $$->over = true; $$->end_line = @$.last_line; }
	| send "over" "link" sx ';'
		{ $$ = $1; $$->over = true; $$->link = $4; $$->end_line = @$.last_line; }
	| "use" call "for" IDENT ';'
		{ $$ = ast_stmt(p, ST_USE, LOC(@1)); $$->call = $2; $$->name = $4;
		  $$->name_loc = LOC(@4); $$->end_line = @$.last_line; }
	| "use" call "for" IDENT "ranks" sx_list ';'
		{ $$ = ast_stmt(p, ST_USE, LOC(@1)); $$->call = $2; $$->name = $4;
		  $$->name_loc = LOC(@4); $$->list = *$6; $$->end_line = @$.last_line; }
	;

if_stmt
	: "if" sx body
		{ $$ = ast_stmt(p, ST_IF, LOC(@1)); $$->value = $2; $$->body = $3;
		  $$->end_line = @$.last_line; }
	| "if" sx body "else" body
		{ $$ = ast_stmt(p, ST_IF, LOC(@1)); $$->value = $2; $$->body = $3; $$->orelse = $5;
		  $$->end_line = @$.last_line; }
	| "if" sx body "else" if_stmt
		{ $$ = ast_stmt(p, ST_IF, LOC(@1)); $$->value = $2; $$->body = $3;
		  $$->orelse = ast_stmts(p, NULL, $5); $$->orelse->end = $5->loc;
		  $$->end_line = @$.last_line; }
	;

send
	: "send" sx "from" sx "to" sx IDENT
		{ $$ = ast_stmt(p, ST_SEND, LOC(@1)); $$->value = $2; $$->from = $4; $$->to = $6;
		  $$->name = $7; $$->name_loc = LOC(@7); }
	;

sx_list
	: sx                { $$ = ast_list(p, NULL, $1); }
	| sx_list ',' sx    { $$ = ast_list(p, $1, $3); }
	;

sx
	: sx_or
	| sx_or ".." sx_or  { $$ = ast_binary(p, LOC(@1), EX_RANGE, $1, $3); }
	;

sx_or
	: sx_and
	| sx_or "or" sx_and { $$ = ast_binary(p, LOC(@1), EX_OR, $1, $3); }
	;

sx_and
	: sx_cmp
	| sx_and "and" sx_cmp { $$ = ast_binary(p, LOC(@1), EX_AND, $1, $3); }
	;

sx_cmp
	: sx_sum
	| sx_sum "==" sx_sum  { $$ = ast_binary(p, LOC(@1), EX_EQ, $1, $3); }
	| sx_sum "!=" sx_sum  { $$ = ast_binary(p, LOC(@1), EX_NE, $1, $3); }
	| sx_sum '<' sx_sum   { $$ = ast_binary(p, LOC(@1), EX_LT, $1, $3); }
	| sx_sum "<=" sx_sum  { $$ = ast_binary(p, LOC(@1), EX_LE, $1, $3); }
	| sx_sum '>' sx_sum   { $$ = ast_binary(p, LOC(@1), EX_GT, $1, $3); }
	| sx_sum ">=" sx_sum  { $$ = ast_binary(p, LOC(@1), EX_GE, $1, $3); }
	;

sx_sum
	: sx_term
	| sx_sum '+' sx_term  { $$ = ast_binary(p, LOC(@1), EX_ADD, $1, $3); }
	| sx_sum '-' sx_term  { $$ = ast_binary(p, LOC(@1), EX_SUB, $1, $3); }
	;

sx_term
	: sx_unary
	| sx_term '*' sx_unary   { $$ = ast_binary(p, LOC(@1), EX_MUL, $1, $3); }
	| sx_term '/' sx_unary   { $$ = ast_binary(p, LOC(@1), EX_DIV, $1, $3); }
	| sx_term "mod" sx_unary { $$ = ast_binary(p, LOC(@1), EX_MOD, $1, $3); }
	;

sx_unary
	: sx_primary
	| '-' sx_unary      { $$ = ast_unary(p, LOC(@1), EX_NEG, $2); }
	| "not" sx_unary    { $$ = ast_unary(p, LOC(@1), EX_NOT, $2); }
	;

sx_primary
	: NUMBER
	| IDENT             { $$ = ast_name(p, LOC(@1), $1); }
	| "root"            { $$ = ast_name(p, LOC(@1), "root"); }
	| IDENT '(' ')'     { $$ = ast_call_expr(p, LOC(@1), $1, NULL); }
	| IDENT '(' sx_list ')' { $$ = ast_call_expr(p, LOC(@1), $1, $3); }
	| '(' sx_list ')'   { $$ = ast_tuple(p, LOC(@1), $2); }
	;

%%

/* A token as a person would name it: keywords and punctuation quoted,
 * identifiers and numbers with their text. */
static const char *
token_text(Parse *p, yysymbol_kind_t tok, char *buf, size_t len)
{
	const char *name = yysymbol_name(tok);
	if (tok == YYSYMBOL_IDENT || tok == YYSYMBOL_NUMBER || tok == YYSYMBOL_STRING) {
		size_t n = p->tok_len < 40 ? p->tok_len : 40;
		snprintf(buf, len, "%s '%.*s%s'", name, (int)n, p->src + p->tok_off,
		         p->tok_len > 40 ? "..." : "");
		return buf;
	}
	if (tok == YYSYMBOL_YYEOF || name[0] == '\'')
		return name;
	snprintf(buf, len, "'%s'", name);
	return buf;
}

/* "; did you mean 'collective'?" when an identifier is one edit or so from a
 * keyword the parser expected there (a misspelt keyword scans as a name). */
static void
keyword_hint(Parse *p, yysymbol_kind_t tok, const yysymbol_kind_t *expected, int n, char *buf,
             size_t len)
{
	buf[0] = 0;
	if (tok != YYSYMBOL_IDENT || p->tok_len >= 32)
		return;
	char word[32], names[YYNTOKENS][32];
	const char *cand[YYNTOKENS];
	int nc = 0;
	snprintf(word, sizeof word, "%.*s", (int)p->tok_len, p->src + p->tok_off);
	for (int i = 0; i < n; i++) {
		/* keywords are named by their bare text */
		const char *name = yysymbol_name(expected[i]);
		if (expected[i] == YYSYMBOL_IDENT || expected[i] == YYSYMBOL_NUMBER ||
		    expected[i] == YYSYMBOL_STRING || strspn(name, "abcdefghijklmnopqrstuvwxyz") != strlen(name) ||
		    strlen(name) >= sizeof names[0])
			continue;
		snprintf(names[nc], sizeof names[nc], "%s", name);
		cand[nc] = names[nc];
		nc++;
	}
	const char *near = nearest_name(word, cand, nc);
	if (near)
		snprintf(buf, len, "; did you mean '%s'?", near);
}

/* A name one edit or so from a keyword, just before the token the parser
 * could not take (`algoritm ring;`: a misspelt keyword scans as a name, and
 * the error comes at the word after it): said at the name, with the
 * keyword. */
static bool
misspelt_keyword(Parse *p)
{
	if (!p->prev_ident || p->prev_len >= 32)
		return false;
	char word[32], names[YYNTOKENS][32];
	const char *cand[YYNTOKENS];
	int nc = 0;
	snprintf(word, sizeof word, "%.*s", (int)p->prev_len, p->src + p->prev_off);
	for (int i = 0; i < YYNTOKENS; i++) {
		const char *name = yysymbol_name((yysymbol_kind_t)i);
		if (i == YYSYMBOL_IDENT || i == YYSYMBOL_NUMBER || i == YYSYMBOL_STRING || !name[0] ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyz_") != strlen(name) ||
		    strlen(name) >= sizeof names[0] || strlen(name) < 4)
			continue;
		snprintf(names[nc], sizeof names[nc], "%s", name);
		cand[nc] = names[nc];
		nc++;
	}
	const char *near = nearest_name(word, cand, nc);
	if (!near)
		return false;
	error_at(p->diag, p->prev_loc, "syntax error: '%s' is not a keyword; did you mean '%s'?", word, near);
	return true;
}

static int
yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, Parse *p)
{
	(void)scanner;
	if (p->stop)
		return 0;
	enum { MAX_LISTED = 6 };
	yysymbol_kind_t expected[YYNTOKENS];
	int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
	yysymbol_kind_t tok = yypcontext_token(ctx);
	Loc loc = LOC(*yypcontext_location(ctx));
	if (tok == YYSYMBOL_YYEMPTY) {
		error_at(p->diag, loc, "syntax error");
		return 0;
	}
	if (tok == YYSYMBOL_YYEOF && p->nesting > 0) {
		Loc open = p->open[p->nesting - 1];
		error_at(p->diag, loc, "unexpected end of file: the '%c' at line %d, column %d is not closed",
		         p->src[p->open_off[p->nesting - 1]], open.line, open.col);
		return 0;
	}
	char buf[96], msg[512], hint[64];
	if (misspelt_keyword(p))
		return 0;
	keyword_hint(p, tok, expected, n, hint, sizeof hint);
	if (hint[0]) {
		error_at(p->diag, loc, "syntax error, unexpected %s%s", token_text(p, tok, buf, sizeof buf), hint);
		return 0;
	}
	int len = snprintf(msg, sizeof msg, "syntax error, unexpected %s",
	                   token_text(p, tok, buf, sizeof buf));
	bool decl = false;
	for (int i = 0; i < n; i++)
		decl |= expected[i] == YYSYMBOL_KW_COLLECTIVE;
	if (decl) {
		error_at(p->diag, loc, "%s, expecting a declaration (param, network, topology, group, "
		         "tree, trees or collective)", msg);
		return 0;
	}
	for (int i = 0; n <= MAX_LISTED && i < n && (size_t)len < sizeof msg; i++) {
		char tb[96];
		const char *name = yysymbol_name(expected[i]);
		if (expected[i] != YYSYMBOL_IDENT && expected[i] != YYSYMBOL_NUMBER &&
		    expected[i] != YYSYMBOL_STRING && expected[i] != YYSYMBOL_YYEOF && name[0] != '\'') {
			snprintf(tb, sizeof tb, "'%s'", name);
			name = tb;
		}
		len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%s",
		                i == 0 ? ", expecting " : i == n - 1 ? " or " : ", ", name);
	}
	error_at(p->diag, loc, "%s", msg);
	return 0;
}

static void
yyerror(YYLTYPE *loc, yyscan_t scanner, Parse *p, const char *msg)
{
	(void)scanner;
	if (p->stop)
		return;
	if (strcmp(msg, "memory exhausted") == 0) {
		error_at(p->diag, LOC(*loc), "expression nested too deeply");
		p->stop = true;
		return;
	}
	error_at(p->diag, LOC(*loc), "%s", msg);
}
