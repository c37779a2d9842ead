/*
 * table.h: text tables whose columns are as wide as their widest cell
 * (table.c), so no value overflows into its neighbour.
 */
#ifndef COLLC_TABLE_H
#define COLLC_TABLE_H

#include <stdio.h>

#include "base.h"

typedef struct Table {
	int ncol;
	const char *align;   /* per column: 'l' left, 'r' right */
	char **cell;         /* row-major; row 0 is the header */
	int ncell, cap;
} Table;

/* head: ncol names; align: ncol letters 'l' or 'r'. */
void table_init(Table *, int ncol, const char *const *head, const char *align);
/* Appends the next cell (rows fill left to right). */
void table_cell(Table *, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* A row that is one free text after the first `lead` cells (a note). */
void table_note(Table *, const char *text);
void table_print(const Table *, FILE *);
void table_free(Table *);

#endif
