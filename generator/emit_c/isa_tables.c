/* The per-ISA spelling tables, from templates/. */
#include "isa_spelling.h"

static const qg_isa_spelling scalar = {
#include "scalar.def"
};
static const qg_isa_spelling avx2 = {
#include "avx2.def"
};
static const qg_isa_spelling avx512 = {
#include "avx512.def"
};
static const qg_isa_spelling neon = {
#include "neon.def"
};
static const qg_isa_spelling rvv = {
#include "rvv.def"
};
static const qg_isa_spelling sve = {
#include "sve.def"
};

const qg_isa_spelling *qg_isa_spelling_of(qg_isa isa) {
    switch (isa) {
    case QG_ISA_SCALAR: return &scalar;
    case QG_ISA_AVX2: return &avx2;
    case QG_ISA_AVX512: return &avx512;
    case QG_ISA_NEON: return &neon;
    case QG_ISA_RVV: return &rvv;
    case QG_ISA_SVE: return &sve;
    default: return NULL;
    }
}
