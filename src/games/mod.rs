//! The games: each brings its rules, indexing and reduction to the shared engine and book container
//! (Oware; backgammon bear-offs).

pub mod bearoff;
pub mod oware;

/// A game as its books name it: the four bytes of the container's game tag,
/// and the command that reads its books.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameTag {
    /// The container's game tag.
    pub tag: [u8; 4],
    /// The `endbook` subcommand of the game (`endbook oware ...`).
    pub command: &'static str,
    /// The game's name in messages ("an Oware book").
    pub books: &'static str,
}

/// Every game's tag: a new game adds its own here, and the tags must differ
/// (a test checks). Messages about a book of another game than the one
/// asked for read it.
pub const GAMES: &[GameTag] = &[
    GameTag {
        tag: oware::book::GAME_TAG,
        command: "oware",
        books: "an Oware book",
    },
    GameTag {
        tag: bearoff::book::GAME_TAG,
        command: "bearoff",
        books: "a bear-off book",
    },
];

/// The fields of a list of counts as positions are written: separated by
/// whitespace and/or commas (`4 4 0`, `4,4,0`, `4, 4, 0`).
pub fn count_fields(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|field| !field.is_empty())
}

/// A token of bad input as an error message quotes it: whole up to 24
/// characters, else its first 20 and how long it was (a line of a megabyte
/// makes no megabyte message), control characters escaped (a newline
/// makes no second line).
pub fn excerpt(token: &str) -> String {
    const WHOLE: usize = 24;
    const START: usize = 20;
    match token.char_indices().nth(WHOLE) {
        None => escape_controls(token),
        Some(_) => {
            let (cut, _) = token.char_indices().nth(START).expect("longer than START");
            format!(
                "{}... ({} characters)",
                escape_controls(&token[..cut]),
                token.chars().count()
            )
        }
    }
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`): one line,
/// nothing a terminal acts on.
pub fn escape_controls(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c.is_control() {
            true => c.escape_debug().collect::<Vec<char>>(),
            false => vec![c],
        })
        .collect()
}

/// The game whose books carry `tag`, if any.
pub fn game_of(tag: [u8; 4]) -> Option<&'static GameTag> {
    GAMES.iter().find(|game| game.tag == tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_tags_and_commands_differ() {
        for (i, a) in GAMES.iter().enumerate() {
            for b in &GAMES[i + 1..] {
                assert_ne!(a.tag, b.tag, "{} and {}", a.command, b.command);
                assert_ne!(a.command, b.command);
            }
            assert!(a.tag.iter().all(u8::is_ascii_uppercase), "{:?}", a.tag);
            assert_eq!(game_of(a.tag), Some(a));
        }
        assert_eq!(game_of(*b"BKGM"), None);
    }

    #[test]
    fn excerpts_cut_long_tokens_only() {
        assert_eq!(excerpt(""), "");
        assert_eq!(excerpt(&"7".repeat(24)), "7".repeat(24));
        assert_eq!(
            excerpt(&"7".repeat(25)),
            format!("{}... (25 characters)", "7".repeat(20))
        );
        // Characters, not bytes: a cut never splits one.
        let wide = "é".repeat(1000);
        assert_eq!(
            excerpt(&wide),
            format!("{}... (1000 characters)", "é".repeat(20))
        );
        // Control characters escaped, counted as given.
        assert_eq!(excerpt("1\n2\t"), "1\\n2\\t");
        assert_eq!(
            excerpt(&"\n".repeat(30)),
            format!("{}... (30 characters)", "\\n".repeat(20))
        );
    }
}
