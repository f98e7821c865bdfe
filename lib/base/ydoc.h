/*
 * ydoc.h - the libyaml boundary: a YAML file as a tree of positioned nodes.
 *
 * Only yaml.c includes <yaml.h>; everything else (manifests, device profiles) sees this tree,
 * whose nodes carry 1-based line and column for messages, and the typed getters below, which
 * report wrong types in one consistent wording.
 */
#ifndef NEURONOP_YDOC_H
#define NEURONOP_YDOC_H

#include "internal.h"

typedef enum nopi_ykind { NOPI_Y_SCALAR, NOPI_Y_SEQ, NOPI_Y_MAP } nopi_ykind;

typedef struct nopi_ynode {
    nopi_ykind kind;
    int line, col;                 /* 1-based position of the node's first character */
    const char *str;               /* scalar: its value; otherwise NULL */
    bool plain;                    /* scalar: written without quotes */
    size_t n;                      /* seq: items; map: pairs */
    struct nopi_ynode **items;     /* seq: n items; map: 2n nodes, key then value */
} nopi_ynode;

typedef struct nopi_ydoc nopi_ydoc;

/* Parses the first document of a file.  A syntax error is reported at its line and column.
 * An empty file gives a document whose root is NULL. */
int nopi_yaml_load(nopi_ydoc **out, const char *path, nop_error *err);
void nopi_yaml_free(nopi_ydoc *doc);
const nopi_ynode *nopi_yaml_root(const nopi_ydoc *doc);
const char *nopi_yaml_path(const nopi_ydoc *doc);

/* Map helpers.  Keys are scalars; nopi_y_key(map, i) is the i-th key. */
const nopi_ynode *nopi_y_key(const nopi_ynode *map, size_t i);
const nopi_ynode *nopi_y_value(const nopi_ynode *map, size_t i);
const nopi_ynode *nopi_y_lookup(const nopi_ynode *map, const char *key);

/* Checks that a map's keys are scalars, unique and among `allowed` (NULL-terminated); an
 * unknown key is reported with the closest allowed one ("did you mean"). `what` names the
 * map in messages ("manifest", "op 'relu'"). */
int nopi_y_check_keys(const nopi_ydoc *doc, const nopi_ynode *map, const char *const *allowed,
                      const char *what, nop_error *err);

/* Typed getters: each fails with "'KEY' must be A, not B" at the node, B being what was
 * written.  `key` names the value in messages. */
int nopi_y_expect(const nopi_ydoc *doc, const nopi_ynode *node, nopi_ykind kind,
                  const char *key, nop_error *err);
int nopi_y_string(const nopi_ydoc *doc, const nopi_ynode *node, const char *key,
                  const char **out, nop_error *err);
int nopi_y_bool(const nopi_ydoc *doc, const nopi_ynode *node, const char *key, bool *out,
                nop_error *err);
int nopi_y_int(const nopi_ydoc *doc, const nopi_ynode *node, const char *key, int64_t min,
               int64_t max, int64_t *out, nop_error *err);
int nopi_y_double(const nopi_ydoc *doc, const nopi_ynode *node, const char *key, double min,
                  double max, double *out, nop_error *err);
/* A list of non-empty strings (`key:` alone is an empty list); *items points into the tree. */
int nopi_y_strings(const nopi_ydoc *doc, const nopi_ynode *node, const char *key,
                   const nopi_ynode ***items, size_t *n, nop_error *err);

/* Fails with an input error (NOP_ERR_INPUT) at a node's position; returns -1. */
int nopi_y_error(const nopi_ydoc *doc, const nopi_ynode *node, nop_error *err,
                 const char *fmt, ...) NOPI_PRINTF(4, 5);

#define nopi_closest nop_closest

#endif /* NEURONOP_YDOC_H */
