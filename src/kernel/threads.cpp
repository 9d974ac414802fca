// The thread count of the local kernels: oneDNN from Debian runs on OpenMP.
#include <omp.h>

#include "convgrid/local_conv.hpp"

namespace convgrid {

int set_kernel_threads(int n) {
  if (n > 0) omp_set_num_threads(n);
  return omp_get_max_threads();
}

int kernel_threads() { return omp_get_max_threads(); }

}  // namespace convgrid
