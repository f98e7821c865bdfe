/* The case table's layout, shared by k.c, s.c and diff.py (which repeats these numbers). */
#define MAXN 8          /* elements per tensor, few enough for ATen's scalar loop */
#define NF 12           /* fields per case */
enum field { F_OP, F_FORM, F_SELF, F_OTHER, F_OUT, F_N, F_SELF_AT, F_OTHER_AT,
             F_S1_KIND, F_S1, F_S2_KIND, F_S2 };
enum form { ALLOC, OUT_NEW, OUT_SELF, OUT_OTHER };   /* the result: new, into out, aliased */
enum skind { S_NONE, S_INT, S_FLOAT };
enum op { ABS, CEIL, FLOOR, SIN, COS, TAN, LOG, LOG2, LOG10, EXP, NOT,
          ADD, SUB, MUL, DIV, AND, OR, POW, POW_T, POW_S, CLAMP, FULL, FILL };
