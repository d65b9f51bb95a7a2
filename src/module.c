/*
 * module.c -- gpuarr._core: imports NumPy's C API and runs each file's
 * ga_<file>_init in dependency order.  Nothing here touches CUDA, so the
 * module imports on machines without a GPU or driver.
 *
 * Single-phase initialisation with static types: the hot paths reach the
 * array type and exception classes without a module-state lookup.  The
 * module therefore supports one interpreter per process.
 */
#define GA_NUMPY_IMPORT
#include "gpuarr.h"

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gpuarr._core",
    .m_doc = "gpuarr's C core: the device array, memory pools, transfers and kernels.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&core_module);
    if (m == NULL)
        return NULL;
    int (*inits[])(PyObject *) = {
        ga_errors_init, ga_runtime_init, ga_mempool_init, ga_dtype_init, ga_arrayobject_init,
        ga_plan_init, ga_convert_init, ga_shape_init, ga_transfer_init, ga_ctors_init,
        ga_mapping_init, ga_methods_init, ga_elementwise_init, ga_interop_init, ga_random_init,
        ga_benchmark_init, ga_reduction_init, ga_scan_init, ga_label_init, ga_measure_init,
        ga_stats_init, ga_convolve_init, ga_compact_init, ga_take_init, ga_sort_init,
        ga_userkernel_init, ga_userelementwise_init, ga_blas_init,
    };
    for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]); ++i) {
        if (inits[i](m) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
