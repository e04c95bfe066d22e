import { useCallback } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import type { Tokens } from '../../api/types.ts';
import { useSession } from '../../session/SessionProvider.tsx';
import { nextPath } from './next-path.ts';

/** Keeps the tokens and goes where the person was headed (or to `to`). */
export function useFinishSignIn(to?: string): (tokens: Tokens) => void {
  const { completeSignIn } = useSession();
  const navigate = useNavigate();
  const [search] = useSearchParams();
  return useCallback(
    (tokens: Tokens) => {
      completeSignIn(tokens);
      navigate(to ?? nextPath(search), { replace: true });
    },
    [completeSignIn, navigate, search, to],
  );
}
