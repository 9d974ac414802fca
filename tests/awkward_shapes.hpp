// Layer shapes that stress the distribution arithmetic, shared by the layout, cost-model and MPI
// tests: sizes that do not divide, blocks of one, filters 1/2/3/5/7 (and 1x7), strides 1 to 4,
// dilation 2, asymmetric padding, unread input rows and columns, images 5 to 63, and a fully
// connected layer (a 1x1 image).
#pragma once

namespace convgrid::test_data {

inline const char* const kAwkwardShapes[] = {
    "N=3,C=5,H=15,W=16,K=7,R=3,S=3,pad=1",
    "N=2,C=4,H=15,W=15,K=3,R=1,S=1,stride=2",
    "N=2,C=3,H=16,W=15,K=4,R=5,S=5,stride=2,pad=2,pad_end=1",
    "N=1,C=6,H=17,W=13,K=5,R=3,S=3,stride=3",
    "N=2,C=2,H=15,W=16,K=2,R=3,S=2,dilation=2,pad=1x0,pad_end=2x1",
    "N=4,C=2,H=7,W=7,K=3,R=7,S=7,pad=3",
    "N=1,C=3,H=16,W=16,K=3,R=1,S=7,stride=4x1,pad=0x3",
    "N=2,C=2,H=5,W=5,K=2,R=3,S=3,pad=1",
    "N=1,C=2,H=63,W=9,K=2,R=5,S=3,stride=2,pad=2x1,pad_end=1x0",
    "N=5,C=37,H=1,W=1,K=6,R=1,S=1",  // fully connected (oneDNN sees one image of N rows)
};

// Grouped layers: depthwise (G = C = K), a depth multiplier of 2 (C/G = 1, K/G = 2), groups of a
// few channels with C != K, strides, dilation, asymmetric padding and unread pixels; group counts
// that grids of up to 8 ranks split both ways (Pk < G, Pk = G, Pk = 2G).
inline const char* const kAwkwardGroupedShapes[] = {
    "N=2,C=6,H=9,W=8,K=6,R=3,S=3,pad=1,groups=6",
    "N=3,C=8,H=7,W=7,K=12,R=3,S=3,stride=2,pad=1,groups=4",
    "N=2,C=6,H=11,W=10,K=4,R=5,S=3,stride=2,pad=2x1,pad_end=1x0,dilation=1x2,groups=2",
    "N=2,C=12,H=6,W=6,K=12,R=1,S=1,stride=2,groups=3",
    "N=1,C=4,H=15,W=15,K=8,R=3,S=3,dilation=2,pad=2,groups=4",
};

}  // namespace convgrid::test_data
