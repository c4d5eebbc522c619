import ArgumentParser

/// The completion scripts, with what ArgumentParser leaves out: the default subcommand's words at
/// the top level. `blesend --to <TAB>` and `blesend <TAB>` complete as `blesend send` would (.pub
/// files, files to send), beside the subcommands' names; likewise blerecv's options for receive.
/// (ArgumentParser's fish script offers the default subcommand's options already.)
public enum DefaultCommandCompletion {
    /// The script for `shell`, or nil when the arguments ask for no completion script.
    public static func script<Root: ParsableCommand>(_ arguments: [String], root: Root.Type) -> String? {
        guard let flag = arguments.firstIndex(of: "--generate-completion-script"), flag + 1 < arguments.count,
              let shell = CompletionShell(rawValue: arguments[flag + 1]) else { return nil }
        let script = Root.completionScript(for: shell)
        guard let defaultCommand = Root.configuration.defaultSubcommand else { return script }
        let tool = Root.configuration.commandName ?? Root._commandName
        let name = defaultCommand.configuration.commandName ?? defaultCommand._commandName
        return patched(script, shell: shell, tool: tool, defaultCommand: name)
    }

    static func patched(_ script: String, shell: CompletionShell, tool: String, defaultCommand: String) -> String {
        switch shell {
        case .bash:
            // The top level's "Offer subcommand completions" branch also runs the default
            // subcommand's completion over all the words.
            let marker = "        # Offer subcommand completions\n"
            guard let start = script.firstRange(of: marker), let end = script[start.upperBound...].firstRange(of: "        ;;\n")
            else { return script }
            let addition = """
                    # and the default subcommand's (\(defaultCommand)), which takes the words when none is named;
                    # past the first word, only its
                    if [[ "${COMP_CWORD}" -gt 1 ]]; then COMPREPLY=(); fi
                    unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")
                    "_\(tool)_\(defaultCommand)"

            """
            var out = script
            out.insert(contentsOf: addition, at: end.lowerBound)
            return out
        case .zsh:
            // A first word that names no subcommand is the default subcommand's.
            let arg = "        \"_\(tool)_${words[1]}\" && ret=0\n            ;;\n"
            guard let range = script.firstRange(of: arg) else { return script }
            let addition = """
                    *)
                        words=(\(defaultCommand) "${words[@]}")
                        (( CURRENT++ ))
                        "_\(tool)_\(defaultCommand)" && ret=0
                        ;;

            """
            var out = script
            out.insert(contentsOf: addition, at: range.upperBound)
            return out
        default:
            return script
        }
    }
}
