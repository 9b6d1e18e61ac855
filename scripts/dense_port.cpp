// The yardstick of issue 4: the algorithm of 000-oware-endgame-books.md as a
// dense sweep over every board with 1..N seeds, one thread, two layers in
// memory, no book written. Written for endbook (not the article's code): each
// board's moves are played once into a per-board record (child index,
// capture), then every layer recomputes every board from the layer before.
//
//   g++ -O3 -march=native -DNSEEDS=16 -o dense-port scripts/dense_port.cpp
//   ./dense-port [LAST]     # prints the time and, per seed count, the values
//                           # with 200 turns left as CSV: seeds,boards,value_-N..value_N;
//                           # with LAST, writes that layer there (one byte a board)
//   ./dense-port --flat F   # also writes every layer there, 1 to LAYERS, as it is
//                           # computed: the article's endSeeds array, which
//                           # `endbook oware export --layers 200` writes too
//                           # (F may be a pipe: --flat >(sha256sum); the time
//                           # printed then includes the writes)
//   (anything else, `--flat` without F included, prints the usage and exits 2)
//
// The CSV rows match `endbook oware stats --format csv` (its value columns),
// so a run checks itself against the book (scripts/scaling.py --port does);
// --flat checks every value (scripts/check_port.py does). Its --flat arrays
// for 9 seeds (146 layers) and 12 seeds have the SHA-256 of the article
// program's. Unlike that program, it counts boards with exact binomials: the
// article's StateCounter multiplies factorials in an int64_t, which overflows
// from 16 seeds on, so its indices and values are wrong there.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#ifndef NSEEDS
#define NSEEDS 16
#endif
#ifndef LAYERS
#define LAYERS 200
#endif

static const int N = NSEEDS;

// binom[n][k] for n up to N + 11.
static uint64_t binom[N + 13][13];

// Boards with `seeds` seeds in `houses` houses.
static uint64_t count_boards(int houses, int seeds) {
    return binom[seeds + houses - 1][houses - 1];
}

// Rank among the boards with the same seed count: house 0 most significant,
// fewer seeds first (the article's order).
static uint64_t rank(const int h[12], int total) {
    uint64_t r = 0;
    int left = total;
    for (int house = 0; house < 11; house++) {
        for (int j = 0; j < h[house]; j++) r += count_boards(11 - house, left - j);
        left -= h[house];
    }
    return r;
}

struct Record {
    int32_t child[6];
    int8_t capture[6];
    int8_t moves;
    int8_t own;  // the mover's seeds: the value when no move feeds the opponent
};

// Plays house m of the mover (houses 0..5) on b; returns the seeds captured.
static int play(int b[12], int m) {
    int seeds = b[m];
    b[m] = 0;
    int house = m;
    while (seeds > 0) {
        house = (house + 1) % 12;
        if (house == m) continue;
        b[house]++;
        seeds--;
    }
    if (house < 6) return 0;
    int captured = 0, first = house;
    while (first >= 6 && (b[first] == 2 || b[first] == 3)) first--;
    bool left = false;
    for (int k = 6; k < 12; k++)
        if ((k <= first || k > house) && b[k] > 0) left = true;
    if (!left) return 0;  // taking every seed of the opponent: no capture
    for (int k = house; k > first; k--) {
        captured += b[k];
        b[k] = 0;
    }
    return captured;
}

// Writes a layer to `f`; false on failure.
static bool write_layer(FILE* f, const std::vector<int8_t>& layer) {
    return fwrite(layer.data(), 1, layer.size(), f) == layer.size();
}

int main(int argc, char** argv) {
    const char* last_path = nullptr;
    FILE* flat = nullptr;
    // `--flat F` or one LAST path (not an option), else usage: `--flat` alone
    // must not write a file named `--flat`.
    bool is_flat = argc > 1 && std::string(argv[1]) == "--flat";
    if ((is_flat && argc != 3) || (!is_flat && (argc > 2 || (argc == 2 && argv[1][0] == '-')))) {
        fprintf(stderr, "usage: %s [LAST] | --flat FILE\n", argv[0]);
        return 2;
    }
    if (is_flat) {
        flat = fopen(argv[2], "wb");
        if (!flat) {
            fprintf(stderr, "cannot write %s\n", argv[2]);
            return 1;
        }
    } else if (argc > 1) {
        last_path = argv[1];
    }
    for (int n = 0; n < N + 13; n++) {
        binom[n][0] = 1;
        for (int k = 1; k < 13; k++) binom[n][k] = n == 0 ? 0 : binom[n - 1][k - 1] + (k <= n - 1 ? binom[n - 1][k] : 0);
    }
    uint64_t start[N + 2];
    start[1] = 0;
    for (int s = 1; s <= N; s++) start[s + 1] = start[s] + count_boards(12, s);
    const uint64_t boards = start[N + 1];

    auto begin = std::chrono::steady_clock::now();
    std::vector<Record> records(boards);
    std::vector<int8_t> prev(boards), next(boards);

    // Every board, in rank order within each seed count.
    for (int s = 1; s <= N; s++) {
        int h[12] = {0};
        h[11] = s;
        for (uint64_t i = start[s]; i < start[s + 1]; i++) {
            Record& r = records[i];
            r.moves = 0;
            r.own = h[0] + h[1] + h[2] + h[3] + h[4] + h[5];
            int best = -100;
            for (int m = 0; m < 6; m++) {
                if (h[m] == 0) continue;
                int c[12];
                for (int k = 0; k < 12; k++) c[k] = h[k];
                int captured = play(c, m);
                if (captured > best) best = captured;
                if (c[6] + c[7] + c[8] + c[9] + c[10] + c[11] == 0) continue;
                int flipped[12];
                for (int k = 0; k < 12; k++) flipped[k] = c[(k + 6) % 12];
                r.child[r.moves] = start[s - captured] + rank(flipped, s - captured);
                r.capture[r.moves] = captured;
                r.moves++;
            }
            prev[i] = r.moves == 0 ? r.own : best;
            // The next board in rank order: an odometer over houses 0..10,
            // house 11 holding the rest.
            int k = 10;
            while (h[11] == 0 && k >= 0) {
                h[11] = h[k];
                h[k] = 0;
                k--;
            }
            if (k < 0) break;
            h[k]++;
            h[11]--;
#ifdef CHECK_RANK
            if (rank(h, s) != i + 1 - start[s]) { fprintf(stderr, "rank mismatch at %llu\n", (unsigned long long)i); return 1; }
#endif
        }
    }

    if (flat && !write_layer(flat, prev)) {
        fprintf(stderr, "cannot write layer 1\n");
        return 1;
    }
    for (int turn = 2; turn <= LAYERS; turn++) {
        for (uint64_t i = 0; i < boards; i++) {
            const Record& r = records[i];
            int best = -100;
            if (r.moves == 0) {
                best = r.own;
            } else {
                for (int m = 0; m < r.moves; m++) {
                    int score = r.capture[m] - prev[r.child[m]];
                    if (score > best) best = score;
                }
            }
            next[i] = best;
        }
        prev.swap(next);
        if (flat && !write_layer(flat, prev)) {
            fprintf(stderr, "cannot write layer %d\n", turn);
            return 1;
        }
    }
    if (flat && fclose(flat) != 0) {
        fprintf(stderr, "cannot write %s\n", argv[2]);
        return 1;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    fprintf(stderr, "dense port: %d seeds, %llu boards, %d layers, %.3f s\n", N,
            (unsigned long long)boards, LAYERS, seconds);

    if (last_path) {  // the last layer, as the flat export's last LAYERS-th slice
        FILE* f = fopen(last_path, "wb");
        if (!f || !write_layer(f, prev) || fclose(f) != 0) {
            fprintf(stderr, "cannot write %s\n", last_path);
            return 1;
        }
    }
    printf("seeds,boards");
    for (int v = -N; v <= N; v++) printf(",value_%d", v);
    printf("\n");
    for (int s = 1; s <= N; s++) {
        std::vector<uint64_t> histogram(2 * N + 1);
        for (uint64_t i = start[s]; i < start[s + 1]; i++) histogram[prev[i] + N]++;
        printf("%d,%llu", s, (unsigned long long)(start[s + 1] - start[s]));
        for (int v = -N; v <= N; v++) printf(",%llu", (unsigned long long)histogram[v + N]);
        printf("\n");
    }
}
