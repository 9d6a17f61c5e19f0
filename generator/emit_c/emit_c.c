/* The C backend's files around the kernels: the public header and the
 * dispatcher that picks the best ISA of the CPU on first call. */
#include "emit_c.h"
#include "c_signature.h"
#include "isa_spelling.h"
#include "qgen/runtime.h"

#include <stdio.h>
#include <string.h>

#define P(...) qg_text_printf(t, __VA_ARGS__)
#define S(s) qg_text_puts(t, s)

void qg_emit_spec_literal(const qg_spec *sp, qg_text *t) {
    const qg_observer_spec *o = &sp->observer;
    P("const qg_spec %s_spec = {\n", sp->name);
    P("    .name = \"%s\",\n    .dtype = %d, /* %s */\n    .qscheme = %d, /* %s */\n", sp->name, (int)sp->dtype,
      qg_dtype_name(sp->dtype), (int)sp->qscheme, qg_qscheme_name(sp->qscheme));
    P("    .ch_axis = %d,\n    .channel_len = %zu,\n", sp->ch_axis, sp->channel_len);
    P("    .quant_min = %lldLL,\n    .quant_max = %lldLL,\n    .custom_range = %d,\n", (long long)sp->quant_min,
      (long long)sp->quant_max, (int)sp->custom_range);
    P("    .given_quant_min = %lldLL,\n    .given_quant_max = %lldLL,\n", (long long)sp->given_quant_min,
      (long long)sp->given_quant_max);
    P("    .reduce_range = %d,\n    .saturate = %d,\n    .compat_mask = %d,\n    .in_place = %d,\n",
      (int)sp->reduce_range, (int)sp->saturate, (int)sp->compat_mask, (int)sp->in_place);
    P("    .fast_training = %d,\n    .rounding = %d, /* %s */\n    .scale_op = %d, /* %s */\n", (int)sp->fast_training,
      (int)sp->rounding, qg_rounding_name(sp->rounding), (int)sp->scale_op, qg_scale_op_name(sp->scale_op));
    P("    .nan_policy = %d,\n    .requant = %d,\n", (int)sp->nan_policy, (int)sp->requant);
    P("    .train_qparams = %d, /* %s */\n", (int)sp->train_qparams, qg_train_qparams_name(sp->train_qparams));
    P("    .observer = {.type = %d, /* %s */\n", (int)o->type, qg_observer_type_name(o->type));
    P("                 .averaging_constant = %a, /* %.9g */\n", (double)o->averaging_constant,
      (double)o->averaging_constant);
    P("                 .eps = %a,\n                 .bins = %d,\n                 .upsample_rate = %d,\n",
      (double)o->eps, o->bins, o->upsample_rate);
    P("                 .fixed_scale = %a,\n                 .fixed_zero_point = %d%s},\n", (double)o->fixed_scale,
      (int)o->fixed_zero_point, o->histc_int ? ",\n                 .histc_int = 1" : "");
    P("    .targets = 0x%xu,\n", sp->targets);
    if (sp->group_size)
        P("    .group_size = %zu,\n", sp->group_size);
    if (sp->float_type != QG_FLOAT32)
        P("    .float_type = %d, /* %s */\n", (int)sp->float_type, qg_float_type_name(sp->float_type));
    if (sp->block != QG_BLOCK_NONE)
        P("    .block = %d, /* %s */\n", (int)sp->block, qg_block_format_name(sp->block));
    S("};\n");
}

static size_t channels_of(const qg_spec *sp) { return qg_qscheme_is_per_channel(sp->qscheme) ? sp->channel_len : 1; }

/* The specs qg_quantize_dynamic serves (docs/semantics.md, "Dynamic quantization"). */
static bool has_dynamic(const qg_spec *sp) { return qg_quantize_dynamic_check(sp, NULL) == QG_OK; }

static void declare_ops(qg_text *t, const qg_spec *sp, const char *suffix) {
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++) {
        qg_c_prototype(t, qg_op_info_of(op), sp->name, qg_c_float_t(sp), suffix);
        S(";\n");
    }
}

qg_status qg_emit_header(const qg_spec *sp, const char *banner, qg_text *t, qg_error *err) {
    const char *n = sp->name;
    S(banner);
    S(" */\n");
    P("#ifndef %s_QGEN_H\n#define %s_QGEN_H\n\n", n, n);
    S("#include <stddef.h>\n#include <stdint.h>\n\n#include \"qgen/runtime.h\"\n\n");
    S("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    P("typedef %s %s_q_t;\n\n", qg_q_type(sp->dtype), n);
    P("#define %s_QUANT_MIN (%lldLL)\n#define %s_QUANT_MAX (%lldLL)\n#define %s_CHANNELS %zu\n", n,
      (long long)sp->quant_min, n, (long long)sp->quant_max, n, channels_of(sp));
    /* the bits of a float tensor's element: 32, or 16 for bfloat16/float16 */
    P("#define %s_FLOAT_BITS %zu\n\n", n, 8 * qg_float_type_size(sp->float_type));
    S("/* Dispatching entry points: the best ISA this CPU has, chosen on first\n"
      " * call (QGEN_ISA=<isa> in the environment forces one). Element i belongs\n"
      " * to channel (i / qp->inner) % qp->channels; mask may be NULL and is ");
    S(sp->compat_mask ? "packed,\n * 1 bit per element, LSB first. */\n" : "one\n * byte per element. */\n");
    if (sp->float_type != QG_FLOAT32)
        P("/* x, y, dy and dx hold %s bit patterns; the arithmetic is float32 on\n"
          " * the widened values, outputs rounded nearest-even (docs/semantics.md,\n"
          " * \"Float types\"). */\n",
          qg_float_type_name(sp->float_type));
    declare_ops(t, sp, "");
    const char *ft = qg_c_float_t(sp);
    P("/* observe, new qparams and fake_quant in one call, with the module state\n"
      " * (qparams, switches) the observer holds; scale and zero_point receive\n"
      " * the qparams after the step (%s_CHANNELS values). See\n"
      " * qg_ref_fused_train_step in qgen/runtime.h. */\n"
      "qg_status %s_fused_train_step(qg_observer *obs, const %s *x, %s *y, uint8_t *mask, size_t n,\n"
      "    size_t inner, float *scale, int32_t *zero_point, qg_error *err);\n",
      n, n, ft, ft);
    if (has_dynamic(sp))
        P("#define %s_HAS_QUANTIZE_DYNAMIC 1\n"
          "/* x quantized per row of row_len elements with the qparams of the row's\n"
          " * own min/max (rows = 1: the whole tensor); scale and zero_point receive\n"
          " * one value per row. See qg_quantize_dynamic in qgen/runtime.h. */\n"
          "qg_status %s_quantize_dynamic(const float *x, %s_q_t *q, size_t rows, size_t row_len, float *scale,\n"
          "    int32_t *zero_point, qg_error *err);\n",
          n, n, n);
    P("/* The ISA the dispatcher chose, e.g. \"avx2\". */\nconst char *%s_isa(void);\n", n);
    P("/* The resolved spec, for qg_observer_create() and friends. */\nextern const qg_spec %s_spec;\n\n", n);
    S("/* Per-ISA variants, for tests and benchmarks. */\n");
    for (int isa = 0; isa < QG_ISA_COUNT; isa++) {
        if (!(sp->targets & (1u << isa)))
            continue;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "__%s", qg_isa_name((qg_isa)isa));
        declare_ops(t, sp, suffix);
    }
    S("\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
    return qg_text_ok(t) ? QG_OK : qg_error_set(err, QG_ERR_NOMEM, "generate: out of memory");
}

/* The vector ISAs of `set`, best first (targets/<isa>.json's rank). */
static size_t isas_by_rank(unsigned set, qg_isa out[QG_ISA_COUNT]) {
    size_t n = 0;
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT; isa++) {
        if (!(set & (1u << isa)))
            continue;
        size_t k = n++;
        for (; k > 0 && qg_target_of(out[k - 1])->rank < qg_target_of(isa)->rank; k--)
            out[k] = out[k - 1];
        out[k] = isa;
    }
    return n;
}

qg_status qg_emit_dispatch(const qg_spec *sp, const char *banner, qg_text *t, qg_error *err) {
    const char *n = sp->name;
    S(banner);
    S(" */\n");
    S("#include <stdatomic.h>\n\n");
    P("#include \"%s.h\"\n\n", n);
    P("typedef struct %s_kernels {\n", n);
    S("    qg_dispatch_head head; /* first: qg_dispatch_pick reads it */\n");
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++) {
        const qg_op_info *o = qg_op_info_of(op);
        P("    %s (*%s)(", o->returns_status ? "qg_status" : "void", o->name);
        qg_c_params(t, o, n, qg_c_float_t(sp), false);
        S(");\n");
    }
    P("} %s_kernels;\n\n", n);
    P("#define %s_ENTRY(isa, id) \\\n    {{#isa, id}", n);
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++)
        P(", \\\n     %s_%s__##isa", n, qg_kernel_op_name(op));
    S("}\n\n");
    S("/* Best first; scalar, always generated, is the fallback. */\n");
    P("static const %s_kernels %s_table[] = {\n", n, n);
    qg_isa order[QG_ISA_COUNT];
    const size_t count = isas_by_rank(sp->targets, order);
    for (size_t k = 0; k < count; k++) {
        qg_isa isa = order[k];
        char upper[16];
        size_t k2 = 0;
        for (const char *c = qg_isa_name(isa); *c && k2 + 1 < sizeof upper; c++)
            upper[k2++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
        upper[k2] = 0;
        P("#if %s\n    %s_ENTRY(%s, QG_ISA_%s),\n#endif\n", qg_target_of(isa)->guard, n, qg_isa_name(isa), upper);
    }
    P("    %s_ENTRY(scalar, QG_ISA_SCALAR),\n};\n\n", n);
    P("static _Atomic(const %s_kernels *) %s_active;\n\n", n, n);
    P("static const %s_kernels *%s_pick(void) {\n", n, n);
    P("    const %s_kernels *k = atomic_load_explicit(&%s_active, memory_order_acquire);\n", n, n);
    S("    if (!k) {\n");
    P("        k = qg_dispatch_pick(%s_table, sizeof %s_table / sizeof %s_table[0], sizeof %s_table[0], \"%s\");\n", n,
      n, n, n, n);
    P("        atomic_store_explicit(&%s_active, k, memory_order_release);\n    }\n", n);
    S("    return k;\n}\n\n");
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++) {
        const qg_op_info *o = qg_op_info_of(op);
        qg_c_prototype(t, o, n, qg_c_float_t(sp), "");
        P(" {\n    %s%s_pick()->%s(", o->returns_status ? "return " : "", n, o->name);
        qg_c_arg_names(t, o);
        S(");\n}\n");
    }
    const char *ft = qg_c_float_t(sp), *step = sp->float_type == QG_FLOAT32 ? "" : "16";
    P("qg_status %s_fused_train_step(qg_observer *obs, const %s *x, %s *y, uint8_t *mask, size_t n,\n"
      "    size_t inner, float *scale, int32_t *zero_point, qg_error *err) {\n"
      "    return qg_fused_train_step%s_with(obs, %s_observe, %s_fake_quant, x, y, mask, n, inner, scale,\n"
      "        zero_point, err);\n}\n",
      n, ft, ft, step, n, n);
    if (has_dynamic(sp)) {
        /* an adapter, so that the kernel is called through its own type */
        P("static void %s_quantize_any(const float *x, void *q, size_t n, const qg_qparams *qp) {\n"
          "    %s_quantize(x, (%s_q_t *)q, n, qp);\n}\n",
          n, n, n);
        P("qg_status %s_quantize_dynamic(const float *x, %s_q_t *q, size_t rows, size_t row_len, float *scale,\n"
          "    int32_t *zero_point, qg_error *err) {\n"
          "    return qg_quantize_dynamic(&%s_spec, %s_observe, %s_quantize_any, x, q, rows, row_len, scale, "
          "zero_point,\n"
          "                               err);\n}\n",
          n, n, n, n, n);
    }
    P("const char *%s_isa(void) { return %s_pick()->head.isa; }\n\n", n, n);
    qg_emit_spec_literal(sp, t);
    return qg_text_ok(t) ? QG_OK : qg_error_set(err, QG_ERR_NOMEM, "generate: out of memory");
}
